//go:build !unix

package tools_test

import "errors"

func mkfifo(string) error { return errors.New("not supported") }
