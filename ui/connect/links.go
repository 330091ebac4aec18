package connect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Problem is why a configuration file's path is unsafe to write.
type Problem int

// Problems reported by UnsafePathError.
const (
	LeavesProject Problem = iota + 1 // a link leads out of the project folder
	DanglingLink                     // the file is a link to nothing
	NotRegular                       // the path leads to a folder, a pipe, a device…
)

// UnsafePathError reports a configuration file that Deskhand does not
// write through: in a project, a link (the file's or a folder's) that leads
// out of the project folder, which a repository can plant to make Deskhand
// write a token elsewhere; anywhere, a link to nothing or something other
// than a regular file. Nothing is written when this error is returned.
type UnsafePathError struct {
	Path    string // the client's configuration file
	Real    string // where it leads, every link followed
	Project string // the project folder (LeavesProject)
	Problem Problem
	Kind    string // what Real is, e.g. "a folder" (NotRegular)
}

func (e *UnsafePathError) Error() string {
	switch e.Problem {
	case LeavesProject:
		return fmt.Sprintf("%s leads to %s, outside the project folder %s; Deskhand does not write through links that leave the project "+
			"and left both untouched: make it a file of the project's own (not a link) and run again", e.Path, e.Real, e.Project)
	case DanglingLink:
		return fmt.Sprintf("%s is a link to %s, which does not exist; Deskhand does not create files through links: "+
			"create that file or remove the link, and run again", e.Path, e.Real)
	}
	what := e.Path
	if e.Real != e.Path {
		what += " leads to " + e.Real + ", which"
	}
	return fmt.Sprintf("%s is not a regular file but %s; Deskhand left it untouched: move it away and run again", what, e.Kind)
}

// maxLinks bounds the links followed in one path, as the OS does.
const maxLinks = 255

// realPath returns p with every link in it followed: links in its folders
// and p itself, like filepath.EvalSymlinks, except that a part that does
// not exist (yet) ends the walk instead of failing it; the rest is kept as
// written. Writing to the result never goes through a link.
func realPath(p string) (string, error) {
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	vol := filepath.VolumeName(p)
	done, todo := vol+string(filepath.Separator), p[len(vol):]
	links := 0
	for todo != "" {
		var part string
		part, todo = firstPart(todo)
		switch part {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, part)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return filepath.Join(next, todo), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("%s: more than %d links", p, maxLinks)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if v := filepath.VolumeName(target); v != "" || filepath.IsAbs(target) || (target != "" && os.IsPathSeparator(target[0])) {
			if v == "" {
				v = vol
			}
			done, target = v+string(filepath.Separator), target[len(v):]
		}
		todo = target + string(filepath.Separator) + todo
	}
	return done, nil
}

// firstPart splits the first element off a path.
func firstPart(p string) (part, rest string) {
	p = strings.TrimLeftFunc(p, func(r rune) bool { return r < 0x80 && os.IsPathSeparator(uint8(r)) })
	i := strings.IndexFunc(p, func(r rune) bool { return r < 0x80 && os.IsPathSeparator(uint8(r)) })
	if i < 0 {
		return p, ""
	}
	return p[:i], p[i:]
}

// within reports whether p is dir or inside it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && !filepath.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolve returns where the configuration file p really is, every link
// followed, refusing a link out of env.Project.
func resolve(p string, env Env) (string, error) {
	real, err := realPath(p)
	if err != nil {
		return "", fmt.Errorf("connect: follow the links in %s: %w", p, err)
	}
	if env.Project == "" {
		return real, nil
	}
	root, err := realPath(env.Project)
	if err != nil {
		return "", fmt.Errorf("connect: follow the links in the project folder %s: %w", env.Project, err)
	}
	if !within(root, real) {
		return "", &UnsafePathError{Path: p, Real: real, Project: env.Project, Problem: LeavesProject}
	}
	return real, nil
}

// kind says in words what a file that is not regular is.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeSymlink != 0:
		return "a link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
