package scope

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// headBytes is how much of a file's new content triage reads.
const headBytes = 4096

var (
	lockfiles = []string{
		"go.sum", "go.work.sum", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml",
		"bun.lockb", "cargo.lock", "poetry.lock", "pipfile.lock", "uv.lock", "gemfile.lock", "composer.lock",
		"pubspec.lock", "podfile.lock", "package.resolved", "flake.lock", "mix.lock", "gradle.lockfile",
	}
	vendored = []string{"vendor", "node_modules", "third_party", "third-party", "bower_components"}
	minified = []string{".min.js", ".min.css", ".js.map", ".css.map"}
	// generated is the header of generated code (the Go convention, also
	// with # and -- comments), looked for in a file's first 10 lines.
	generated = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(//|#|--) Code generated .* DO NOT EDIT\.$`) })
	// ciPaths are continuous-integration configurations, by path prefix.
	ciPaths = []string{
		".github/workflows/", ".github/actions/", ".gitlab-ci.yml", ".gitlab/ci/", ".circleci/", ".travis.yml",
		"jenkinsfile", "azure-pipelines.yml", ".buildkite/", "bitbucket-pipelines.yml", ".drone.yml",
	}
	// sensitive are path words (whole words of a path, split at
	// punctuation and camel case) that make a file worth a deep review.
	sensitive = []string{
		"auth", "authn", "authz", "oauth", "oauth2", "authenticate", "authentication", "authenticator",
		"authorize", "authorization", "authorizer", "login", "password", "passwd", "credential", "credentials",
		"crypto", "cryptography", "encrypt", "encryption", "decrypt", "security", "secret", "secrets",
		"permission", "permissions", "rbac", "acl", "jwt", "sandbox", "hook", "hooks", "migration",
		"migrations", "migrate",
	}
)

// triageAll sets Triage and TriageReason of every change. The rules, first
// match wins: the Normal, Skip and Deep globs of req; then skip for
// lockfiles, vendored directories, binary, minified and generated files;
// then deep for CI configuration and sensitive path words; else normal.
func triageAll(ctx context.Context, g git, changes []change, req Request) error {
	var blobs []string
	for _, c := range changes {
		if c.Status != "deleted" && !c.Binary {
			blobs = append(blobs, c.blob)
		}
	}
	heads, err := g.heads(ctx, blobs, headBytes)
	if err != nil {
		return err
	}
	for i := range changes {
		c := &changes[i]
		c.Triage, c.TriageReason = triage(c.File, heads[c.blob], req)
	}
	return nil
}

// triage decides one file from its path, kind and first bytes.
func triage(f File, head []byte, req Request) (string, string) {
	for _, r := range []struct {
		triage string
		globs  []string
	}{{"normal", req.Normal}, {"skip", req.Skip}, {"deep", req.Deep}} {
		for _, glob := range r.globs {
			if matchPath(glob, f.Path) {
				return r.triage, fmt.Sprintf("whetstone.json triage %s: %s", r.triage, glob)
			}
		}
	}
	lower := strings.ToLower(f.Path)
	base := path.Base(lower)
	dirs := strings.Split(path.Dir(lower), "/")
	switch {
	case slices.Contains(lockfiles, base):
		return "skip", "lockfile"
	case slices.ContainsFunc(dirs, func(d string) bool { return slices.Contains(vendored, d) }):
		return "skip", "vendored"
	case f.Binary:
		return "skip", "binary"
	case slices.ContainsFunc(minified, func(s string) bool { return strings.HasSuffix(base, s) }):
		return "skip", "minified"
	case isGenerated(head):
		return "skip", "generated (Code generated … DO NOT EDIT)"
	}
	for _, p := range ciPaths {
		if lower == strings.TrimSuffix(p, "/") || strings.HasPrefix(lower, p) {
			return "deep", "CI configuration"
		}
	}
	for _, w := range words(f.Path) {
		if slices.Contains(sensitive, w) {
			return "deep", fmt.Sprintf("sensitive path (%s)", w)
		}
	}
	return "normal", ""
}

// isGenerated reports whether one of the first 10 lines of head is a
// "Code generated … DO NOT EDIT." header.
func isGenerated(head []byte) bool {
	for i, line := range bytes.SplitN(head, []byte("\n"), 11) {
		if i < 10 && generated().Match(bytes.TrimSuffix(line, []byte("\r"))) {
			return true
		}
	}
	return false
}

// words splits a path into lower-case words at punctuation and camel-case
// humps: "internal/authMiddleware_v2.go" gives
// internal, auth, middleware, v2, go.
func words(p string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prev := rune(0)
	for _, r := range p {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return out
}

// matchPath reports whether glob matches p or a directory above it, with
// the pathspec words' glob rules: "*", "?" and "[…]" within one path
// segment, "**" across any number of segments.
func matchPath(glob, p string) bool {
	pat := strings.Split(strings.Trim(path.Clean(glob), "/"), "/")
	segs := strings.Split(p, "/")
	for n := len(segs); n > 0; n-- {
		if matchSegments(pat, segs[:n]) {
			return true
		}
	}
	return false
}

func matchSegments(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if matchSegments(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	ok, err := path.Match(pat[0], segs[0])
	return ok && err == nil && matchSegments(pat[1:], segs[1:])
}
