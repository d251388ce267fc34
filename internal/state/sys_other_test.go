//go:build !unix

package state_test

import "errors"

func mkfifo(string) error { return errors.ErrUnsupported }

func limitFileSize(uint64) error { return errors.ErrUnsupported }
