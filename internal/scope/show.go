package scope

import (
	"context"
	"errors"
	"fmt"

	"github.com/whetstone-dev/whetstone/internal/gitrun"
)

// ReadTreeFile returns the first limit bytes of file (a path relative to
// root, the project root) in tree, a tree object of root's repository: the
// code a report quotes from a reviewed snapshot. truncated says the file is
// longer.
func ReadTreeFile(ctx context.Context, root, tree, file string, limit int) (data []byte, truncated bool, err error) {
	g := gitrun.Git{Dir: root}
	prefix, err := g.Str(ctx, "rev-parse", "--show-prefix")
	if err != nil {
		return nil, false, err
	}
	found := false
	err = g.Heads(ctx, []string{tree + ":" + prefix + file}, limit+1, func(_ string, head []byte) {
		found = true
		data, truncated = head[:min(len(head), limit)], len(head) > limit
	})
	if err == nil && !found {
		err = fmt.Errorf("%s is not in tree %s", file, tree)
	}
	return data, truncated, err
}

// OriginURL returns the URL of root's remote "origin", or an error when
// there is none.
func OriginURL(ctx context.Context, root string) (string, error) {
	url, err := gitrun.Git{Dir: root}.Str(ctx, "remote", "get-url", "origin")
	if err == nil && url == "" {
		err = errors.New("origin has no URL")
	}
	return url, err
}
