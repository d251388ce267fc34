package shell

import (
	"slices"
	"strings"
)

// A call is one run of a program whetstone knows.
type call struct {
	name string // the program, as the table names it
	args []word // the words after the program's name
	all  []word // every word, the program's name first
}

// part returns the command as written, for reasons.
func (x *call) part() string {
	srcs := make([]string, len(x.all))
	for i, w := range x.all {
		srcs[i] = w.src
	}
	return strings.Join(srcs, " ")
}

// with returns what the command is called with one of its options, such as
// "sort -o", for reasons.
func (x *call) with(opt string) string {
	return quote(x.name + " " + opt)
}

// A spec describes the options of a program, enough to tell options from
// operands and values.
type spec struct {
	short    string   // short options that take a value: -o FILE, -oFILE
	optional string   // short options whose value, if any, is attached: -i.bak
	long     []string // long options that take a value, without the dashes
	posix    bool     // options end at the first operand, as for wrappers
}

// An opt is an option found in a command's arguments.
type opt struct {
	name  string // "-o", or "--output" as written (maybe abbreviated)
	value word   // its value, when it has one
	has   bool   // whether it has a value
}

// parse splits args into options and operands, reading options until "--"
// (or, with posix, the first operand). It returns the first word that might
// be an option but is only known when the command runs, if any.
func parse(args []word, s spec) (opts []opt, operands []word, bad *word) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.known {
			if w.option() && bad == nil {
				bad = &args[i]
			}
			operands = append(operands, w)
			if s.posix {
				return opts, append(operands, args[i+1:]...), bad
			}
			continue
		}
		t := w.text
		switch {
		case t == "--":
			return opts, append(operands, args[i+1:]...), bad
		case len(t) < 2 || t[0] != '-':
			operands = append(operands, w)
			if s.posix {
				return opts, append(operands, args[i+1:]...), bad
			}
		case strings.HasPrefix(t, "--"):
			name, value, attached := strings.Cut(t, "=")
			o := opt{name: name}
			switch {
			case attached:
				o.value, o.has = word{text: value, src: w.src, known: true, segs: []seg{{text: value}}}, true
			case takesValue(name[2:], s.long) && i+1 < len(args):
				i++
				o.value, o.has = args[i], true
			}
			opts = append(opts, o)
		default:
			for j := 1; j < len(t); j++ {
				o := opt{name: "-" + t[j:j+1]}
				if strings.IndexByte(s.short, t[j]) >= 0 || strings.IndexByte(s.optional, t[j]) >= 0 {
					rest := t[j+1:]
					switch {
					case rest != "":
						o.value, o.has = word{text: rest, src: w.src, known: true, segs: []seg{{text: rest}}}, true
					case strings.IndexByte(s.short, t[j]) >= 0 && i+1 < len(args):
						i++
						o.value, o.has = args[i], true
					}
					opts = append(opts, o)
					break
				}
				opts = append(opts, o)
			}
		}
	}
	return opts, operands, bad
}

// takesValue reports whether the long option name, maybe abbreviated, is one
// of those that take a value.
func takesValue(name string, long []string) bool {
	for _, l := range long {
		if l == name || name != "" && strings.HasPrefix(l, name) {
			return true
		}
	}
	return false
}

// is reports whether o is one of names: short options exactly, long ones
// also by an abbreviation, as GNU getopt accepts them.
func (o opt) is(names ...string) bool {
	for _, n := range names {
		if o.name == n || strings.HasPrefix(n, "--") && len(o.name) > 2 && strings.HasPrefix(n, o.name) {
			return true
		}
	}
	return false
}

// find returns the first of opts that is one of names.
func find(opts []opt, names ...string) (opt, bool) {
	for _, o := range opts {
		if o.is(names...) {
			return o, true
		}
	}
	return opt{}, false
}

// dynamicOption refuses a word that might be an option of a program whose
// options can write or run programs.
func (c *checker) dynamicOption(x *call, w *word) {
	c.denyf("%s passes %s to %s, which could be an option that writes or runs a program; write the argument literally or after --", quote(x.part()), quote(w.src), x.name)
}

// options judges a program that only reads unless given one of the options
// in refused, which maps each to what it does ("writes files"). Options in
// outputs name a file the program writes to, judged like a redirection.
func options(s spec, refused map[string]string, outputs ...string) func(*checker, *call) {
	return func(c *checker, x *call) {
		opts, _, bad := parse(x.args, s)
		if bad != nil {
			c.dynamicOption(x, bad)
			return
		}
		for _, o := range opts {
			for name, what := range refused {
				if o.is(name) {
					c.denyf("%s %s; %s", x.with(name), what, c.instead())
					return
				}
			}
			if o.is(outputs...) {
				if !o.has {
					c.denyf("%s names no file; cannot judge it", x.with(o.name))
					return
				}
				c.writes(o.value, x.with(o.name))
			}
		}
	}
}

// reads judges a program that only reads, whatever its arguments.
func reads(*checker, *call) {}

// identifiers refuses words that should name variables but might instead
// hold an array subscript, which bash evaluates as code.
func (c *checker) identifiers(x *call, ws []word, state varState) {
	for _, w := range ws {
		if !w.known || !isName(w.text) {
			c.denyf("%s names the variable %s with an expression, which can run code; use a plain name", quote(x.part()), quote(w.src))
			return
		}
		c.setVar(w.text, state)
	}
}

// clusterHas reports whether a short-option word such as -xvf holds letter.
func clusterHas(t string, letter byte) bool {
	return len(t) > 1 && t[0] == '-' && t[1] != '-' && strings.IndexByte(t[1:], letter) >= 0
}

func texts(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.text
	}
	return out
}

func allKnown(ws []word) bool {
	return !slices.ContainsFunc(ws, func(w word) bool { return !w.known })
}
