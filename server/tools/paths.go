package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/deskhand/deskhand/server/agent"
)

// maxLinks bounds the symbolic links followed while resolving one path.
const maxLinks = 40

// folder is one folder an agent may use.
type folder struct {
	given string // as in the agent's settings, for messages
	real  string // cleaned, absolute, symbolic links resolved
}

// scope is what an agent's file tools may reach.
type scope struct {
	folders []folder // those that exist, in the settings' order
	given   []string // every configured folder, for messages
	first   string   // relative paths start here (cleaned, unresolved)
	firstOK bool     // whether first exists and resolves
}

// target is a path resolved inside a scope.
type target struct {
	given string // the path as the model wrote it
	root  string // the resolved allowed folder it is in
	rel   string // its path inside root; "." is root itself
	real  string // root joined with rel
}

// scopeOf returns the folders the agent may use, or the *agent.UserError
// for an agent that has none.
func scopeOf(a agent.Agent) (scope, error) {
	var s scope
	for _, f := range a.Folders {
		if strings.TrimSpace(f) == "" {
			continue
		}
		s.given = append(s.given, f)
	}
	if len(s.given) == 0 {
		return scope{}, agent.Userf(nil, "no folders are allowed for this agent; add one in its settings")
	}
	for i, f := range s.given {
		clean := filepath.Clean(f)
		if i == 0 {
			s.first = clean
		}
		// A relative folder has no meaning for a desktop app; it matches nothing.
		if !filepath.IsAbs(clean) {
			continue
		}
		real, err := filepath.EvalSymlinks(clean)
		if err != nil {
			continue // missing or unreadable: it matches nothing
		}
		if i == 0 {
			s.firstOK = true
		}
		s.folders = append(s.folders, folder{given: f, real: real})
	}
	return s, nil
}

// list names the allowed folders for messages.
func (s scope) list() string {
	quoted := make([]string, len(s.given))
	for i, f := range s.given {
		quoted[i] = fmt.Sprintf("%q", f)
	}
	return strings.Join(quoted, ", ")
}

// resolve turns the path the model gave into a target inside one of the
// allowed folders, or refuses it with an *agent.UserError naming the path
// and the folders.
func (s scope) resolve(p string) (target, error) {
	if strings.ContainsRune(p, 0) {
		return target{}, agent.Userf(nil, "invalid path %q: it contains a NUL character", p)
	}
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
	} else {
		if !s.firstOK {
			return target{}, agent.Userf(nil, "cannot use the relative path %q: relative paths start in the first allowed folder, %q, which does not exist or cannot be read; use an absolute path inside one of: %s", p, s.given[0], s.list())
		}
		abs = filepath.Join(s.first, p)
	}
	real, err := resolveLinks(abs, 0)
	if err != nil {
		return target{}, agent.Userf(err, "cannot use the path %q: %s; the allowed folders are %s", p, describe(err), s.list())
	}
	for _, f := range s.folders {
		if rel, ok := within(f.real, real); ok {
			return target{given: p, root: f.real, rel: rel, real: real}, nil
		}
	}
	if len(s.folders) == 0 {
		return target{}, agent.Userf(nil, "cannot use the path %q: none of this agent's folders (%s) exists any more; check its settings", p, s.list())
	}
	how := ""
	if s.withinAny(abs) {
		// Where the link leads is not said: it is outside.
		how = " through a symbolic link"
	}
	return target{}, agent.Userf(nil, "access denied: the path %q leads%s outside the folders this agent may use: %s", p, how, s.list())
}

// withinAny reports whether the unresolved path p lies in a folder as
// configured or as resolved, before its links are followed.
func (s scope) withinAny(p string) bool {
	for _, f := range s.folders {
		for _, root := range []string{filepath.Clean(f.given), f.real} {
			if _, ok := within(root, p); ok {
				return true
			}
		}
	}
	return false
}

// within reports whether p is root or beneath it, comparing whole path
// components (so /a/bc is not within /a/b), and returns p relative to root.
func within(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// resolveLinks resolves the symbolic links of the clean absolute path p:
// filepath.EvalSymlinks on its longest existing prefix; then, if the next
// component is a dangling link, its target by hand (a new file written
// through it would land there); the components that do not exist yet are
// appended as they are.
func resolveLinks(p string, links int) (string, error) {
	prefix := p
	var rest []string // components after prefix, in order
	var real string
	for {
		r, err := filepath.EvalSymlinks(prefix)
		if err == nil {
			real = r
			break
		}
		parent := filepath.Dir(prefix)
		if parent == prefix {
			return "", err // not even the volume root resolves
		}
		rest = append([]string{filepath.Base(prefix)}, rest...)
		prefix = parent
	}
	if len(rest) == 0 {
		return real, nil
	}
	next := filepath.Join(real, rest[0])
	fi, err := os.Lstat(next)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return filepath.Join(append([]string{real}, rest...)...), nil
	case err != nil:
		return "", err
	case fi.Mode()&fs.ModeSymlink == 0 && len(rest) == 1 && links < maxLinks:
		// It appeared since the whole path failed to resolve (another
		// write created it): resolve again.
		return resolveLinks(p, links+1)
	case fi.Mode()&fs.ModeSymlink == 0:
		// It exists but its prefix did not resolve: not a directory, or
		// not searchable. Nothing below it can be reached.
		return "", &fs.PathError{Op: "resolve", Path: next, Err: errNoTraverse}
	}
	if links >= maxLinks {
		return "", &fs.PathError{Op: "resolve", Path: p, Err: errTooManyLinks}
	}
	dest, err := os.Readlink(next)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(dest) {
		dest = filepath.Join(real, dest) // real has no links, so ".." is exact
	}
	return resolveLinks(filepath.Join(append([]string{dest}, rest[1:]...)...), links+1)
}

var (
	errNoTraverse   = errors.New("a component of the path is not a folder that can be opened")
	errTooManyLinks = errors.New("too many symbolic links")
)

// describe says what went wrong with a file in words for the model.
func describe(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "it does not exist"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, errNoTraverse):
		return errNoTraverse.Error()
	case errors.Is(err, errTooManyLinks):
		return "it goes through too many symbolic links"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
