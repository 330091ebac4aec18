package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/deskhand/deskhand/server/agent"
)

// iconFlag turns --icon's value into an agent's icon: "" clears it; the
// name of an image file (PNG, JPEG or SVG, at most 64 KiB) becomes the
// image; anything else is an emoji (or a few characters), as typed.
func iconFlag(value string) (string, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return "", nil
	}
	info, err := os.Stat(value)
	switch {
	case err == nil && info.Mode().IsRegular():
		return iconFile(value, info.Size())
	case err == nil:
		return "", userf("--icon %s: not a file; give an image file (PNG, JPEG or SVG) or an emoji", value)
	case looksLikeImagePath(value):
		return "", userf("--icon %s: no such file; give an image file (PNG, JPEG or SVG) or an emoji", value)
	}
	icon, err := agent.CheckIcon(value)
	if err != nil {
		return "", fmt.Errorf("--icon: %w", err)
	}
	return icon, nil
}

// iconFile reads an icon image, refusing one over the limit unread.
func iconFile(path string, size int64) (string, error) {
	name := filepath.Base(path)
	if size > agent.MaxIconImageBytes {
		return "", agent.Userf(nil, "--icon %s is %d KiB: an icon image may be at most %d KiB; pick a smaller one", name, (size+1023)>>10, agent.MaxIconImageBytes>>10)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", agent.Userf(err, "--icon: cannot read %s", path)
	}
	defer f.Close()
	// At most one byte over: a file that grew since Stat is still refused.
	data, err := io.ReadAll(io.LimitReader(f, agent.MaxIconImageBytes+1))
	if err != nil {
		return "", agent.Userf(err, "--icon: cannot read %s", path)
	}
	icon, err := agent.IconFromFile(name, data)
	if err != nil {
		return "", fmt.Errorf("--icon: %w", err)
	}
	return icon, nil
}

// looksLikeImagePath tells a mistyped file name from an emoji.
func looksLikeImagePath(s string) bool {
	if strings.ContainsAny(s, `/\`) {
		return true
	}
	switch strings.ToLower(filepath.Ext(s)) {
	case ".png", ".jpg", ".jpeg", ".svg":
		return true
	}
	return false
}
