package shell

import (
	"fmt"
	"strings"
)

// This file holds the everyday programs that read by default but write files
// when told to: downloads, archives, compressors, sort and uniq.

// toStdout reports whether an output file named by an option is really
// standard output or a harmless device.
func toStdout(file string) bool {
	return file == "-" || safeTargets[file]
}

// optionValue returns the value of the short option whose letter starts
// opt[j:]: what follows it in the word, or else the next word.
func optionValue(args []string, i, j int) string {
	if v := args[i][j+1:]; v != "" {
		return v
	}
	if i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// checkCurl flags curl when it saves what it fetches, or headers or cookies,
// to a file.
func checkCurl(args []string) string {
	const valueLetters = "AbcCdDeEFHKmoQrTuUwxXyYz"
	for i, a := range args {
		if strings.HasPrefix(a, "--") {
			name, value, attached := strings.Cut(a, "=")
			switch name {
			case "--remote-name", "--remote-name-all":
				return `"curl --remote-name" writes files`
			case "--output", "--dump-header", "--cookie-jar", "--trace", "--trace-ascii":
				if !attached && i+1 < len(args) {
					value = args[i+1]
				}
				if !toStdout(value) {
					return fmt.Sprintf("%q writes files", "curl "+name)
				}
			}
			continue
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		for j := 1; j < len(a); j++ {
			switch c := a[j]; {
			case c == 'O':
				return `"curl -O" writes files`
			case c == 'o' || c == 'D' || c == 'c':
				if !toStdout(optionValue(args, i, j)) {
					return fmt.Sprintf("%q writes files", "curl -"+string(c))
				}
				j = len(a)
			case strings.IndexByte(valueLetters, c) >= 0:
				j = len(a)
			}
		}
	}
	return ""
}

// checkWget flags wget unless it only checks a link or prints what it fetches.
func checkWget(args []string) string {
	for i, a := range args {
		switch {
		case a == "--spider":
			return ""
		case strings.HasPrefix(a, "--output-document"):
			_, value, attached := strings.Cut(a, "=")
			if !attached && i+1 < len(args) {
				value = args[i+1]
			}
			if toStdout(value) {
				return ""
			}
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			if j := strings.IndexByte(a, 'O'); j > 0 && toStdout(optionValue(args, i, j)) {
				return ""
			}
		}
	}
	return `"wget" writes files`
}

// checkTar flags tar when it creates, extracts or changes an archive, unless
// it extracts to standard output.
func checkTar(args []string) string {
	if hasFlag(args, "--to-stdout") {
		return ""
	}
	for i, a := range args {
		var mode string
		switch {
		case hasFlag([]string{a}, "--create", "--extract", "--get", "--append", "--update", "--delete", "--concatenate", "--catenate"):
			return `"tar" writes files`
		case strings.HasPrefix(a, "--"):
			continue
		case strings.HasPrefix(a, "-"):
			mode = a[1:]
		case i == 0:
			mode = a // the old style, as in tar xzf a.tgz
		}
		if strings.ContainsAny(mode, "cxruA") && !strings.Contains(mode, "O") {
			return `"tar" writes files`
		}
	}
	return ""
}

// checkUnzip flags unzip unless it lists, tests or prints the archive.
func checkUnzip(args []string) string {
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' && strings.ContainsAny(a[1:], "lptvZzc") {
			return ""
		}
	}
	return `"unzip" writes files`
}

// compressors replace the files they are given unless told to write to
// standard output, list or test.
var compressors = map[string]bool{
	"gzip": true, "gunzip": true, "bzip2": true, "bunzip2": true, "xz": true, "unxz": true,
	"zstd": true, "unzstd": true, "lz4": true,
}

// checkCompressor flags a compressor that replaces or writes files.
func checkCompressor(name string, args []string) string {
	operands := 0
	for _, a := range args {
		switch {
		case hasFlag([]string{a}, "--stdout", "--to-stdout", "--list", "--test"):
			return ""
		case strings.HasPrefix(a, "--"):
		case len(a) > 1 && a[0] == '-':
			if strings.ContainsAny(a[1:], "clt") {
				return ""
			}
		default:
			operands++
		}
	}
	if operands == 0 {
		return "" // filters standard input to standard output
	}
	return fmt.Sprintf("%q writes files", name)
}

// checkSort flags sort -o, which writes its output to a file.
func checkSort(args []string) string {
	for i, a := range args {
		out, found := "", false
		if l, _ := shortOption(a, "okStT"); l == 'o' {
			out, found = optionValue(args, i, strings.IndexByte(a, 'o')), true
		} else if name, value, attached := strings.Cut(a, "="); name == "--output" {
			out, found = value, true
			if !attached && i+1 < len(args) {
				out = args[i+1]
			}
		}
		if found && !toStdout(out) {
			return `"sort -o" writes files`
		}
	}
	return ""
}

// checkUniq flags uniq given an output file, its second operand.
func checkUniq(args []string) string {
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-f" || a == "-s" || a == "-w":
			i++
		case len(a) > 1 && a[0] == '-':
		default:
			operands = append(operands, a)
		}
	}
	if len(operands) >= 2 && !toStdout(operands[1]) {
		return `"uniq" writes files`
	}
	return ""
}
