package tools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/deskhand/deskhand/server/agent"
)

// open resolves p for agent a and opens the allowed folder it is in, so
// the caller reaches the file as root-relative tg.rel.
// openArg checks the tool's required path argument, then opens it as open does.
func openArg(ctx context.Context, tool string, a agent.Agent, p string) (target, *os.Root, error) {
	if err := required(tool, "path", p); err != nil {
		return target{}, nil, err
	}
	if err := ctx.Err(); err != nil {
		return target{}, nil, err
	}
	return open(a, p)
}

func open(a agent.Agent, p string) (tg target, root *os.Root, err error) {
	s, err := scopeOf(a)
	if err != nil {
		return target{}, nil, err
	}
	if tg, err = s.resolve(p); err != nil {
		return target{}, nil, err
	}
	if root, err = os.OpenRoot(tg.root); err != nil {
		return target{}, nil, agent.Userf(err, "cannot open the allowed folder %q: %s", tg.root, describe(err))
	}
	return tg, root, nil
}

// fileError words a failed file operation on tg for the model.
func fileError(verb string, tg target, err error) error {
	return agent.Userf(err, "cannot %s %q: %s", verb, tg.given, describe(err))
}

type pathArgs struct {
	Path string `json:"path"`
}

func (readFile) DecodeArguments(raw json.RawMessage) (json.RawMessage, error) {
	return decoded[pathArgs](NameReadFile, raw)
}

func (listDir) DecodeArguments(raw json.RawMessage) (json.RawMessage, error) {
	return decoded[pathArgs](NameListDir, raw)
}

// readFile is read_file.
type readFile struct{ max int64 }

func (t readFile) Spec() agent.ToolSpec {
	return agent.ToolSpec{
		Name: NameReadFile,
		Description: fmt.Sprintf("Read a text file inside the folders you are allowed to use and return its content. "+
			"Files larger than %d bytes are cut, with a note saying so. Binary files are refused.", t.max),
		Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {
      "type": "string",
      "description": "The file to read: an absolute path, or a path relative to your first allowed folder."
    }
  },
  "required": ["path"],
  "additionalProperties": false
}`),
	}
}

func (t readFile) Call(ctx context.Context, a agent.Agent, raw json.RawMessage) (string, error) {
	var args pathArgs
	if err := decodeArgs(NameReadFile, raw, &args); err != nil {
		return "", err
	}
	tg, root, err := openArg(ctx, NameReadFile, a, args.Path)
	if err != nil {
		return "", err
	}
	defer root.Close()
	// Stat before opening: opening a named pipe would block.
	fi, err := root.Stat(tg.rel)
	if err != nil {
		return "", fileError("read", tg, err)
	}
	if fi.IsDir() {
		return "", agent.Userf(nil, "cannot read %q: it is a folder, not a file; use %s to see what it holds", tg.given, NameListDir)
	}
	if !fi.Mode().IsRegular() {
		return "", agent.Userf(nil, "cannot read %q: it is not a regular file", tg.given)
	}
	f, err := root.Open(tg.rel)
	if err != nil {
		return "", fileError("read", tg, err)
	}
	defer f.Close()
	// A hard link is the same file under another name, perhaps outside
	// the allowed folders, and nothing tells where: such files are not read.
	if n, err := linkCount(f); err != nil {
		return "", fileError("read", tg, err)
	} else if n > 1 {
		return "", agent.Userf(nil, "cannot read %q: it has %d hard links, so the same file may also sit outside the allowed folders; %s reads only files with one name (the person can copy it instead)", tg.given, n, NameReadFile)
	}
	data, cut, err := readCapped(f, t.max)
	if err != nil {
		return "", fileError("read", tg, err)
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return "", agent.Userf(nil, "cannot read %q: it is a binary file (it contains NUL bytes); %s reads only text files", tg.given, NameReadFile)
	}
	switch {
	case cut:
		size := fi.Size()
		if size <= t.max { // it grew while being read
			size = t.max + 1
		}
		return asText(data) + fmt.Sprintf("\n\n[truncated: the file is %d bytes; only the first %d bytes are shown (the read limit is %d bytes)]", size, len(data), t.max), nil
	case len(data) == 0:
		return "(the file is empty)", nil
	}
	return asText(data), nil
}

// listDir is list_dir.
type listDir struct{}

func (listDir) Spec() agent.ToolSpec {
	return agent.ToolSpec{
		Name: NameListDir,
		Description: fmt.Sprintf("List a folder inside the folders you are allowed to use: one entry per line, sorted by name, "+
			"folders marked with a trailing \"/\", files with their size in bytes, symbolic links with a trailing \"@\". "+
			"At most %d entries are shown.", maxListEntries),
		Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {
      "type": "string",
      "description": "The folder to list: an absolute path, or a path relative to your first allowed folder (\".\" is that folder)."
    }
  },
  "required": ["path"],
  "additionalProperties": false
}`),
	}
}

func (listDir) Call(ctx context.Context, a agent.Agent, raw json.RawMessage) (string, error) {
	var args pathArgs
	if err := decodeArgs(NameListDir, raw, &args); err != nil {
		return "", err
	}
	tg, root, err := openArg(ctx, NameListDir, a, args.Path)
	if err != nil {
		return "", err
	}
	defer root.Close()
	fi, err := root.Stat(tg.rel)
	if err != nil {
		return "", fileError("list", tg, err)
	}
	if !fi.IsDir() {
		return "", agent.Userf(nil, "cannot list %q: it is a file, not a folder; use %s to read it", tg.given, NameReadFile)
	}
	d, err := root.Open(tg.rel)
	if err != nil {
		return "", fileError("list", tg, err)
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return "", fileError("list", tg, err)
	}
	slices.SortFunc(entries, func(x, y fs.DirEntry) int { return strings.Compare(x.Name(), y.Name()) })

	var b strings.Builder
	switch len(entries) {
	case 0:
		fmt.Fprintf(&b, "The folder %s is empty.", tg.real)
		return b.String(), nil
	case 1:
		fmt.Fprintf(&b, "%s (1 entry):\n", tg.real)
	default:
		fmt.Fprintf(&b, "%s (%d entries):\n", tg.real, len(entries))
	}
	for _, e := range entries[:min(len(entries), maxListEntries)] {
		b.WriteString(entryLine(e))
		b.WriteByte('\n')
	}
	if n := len(entries); n > maxListEntries {
		fmt.Fprintf(&b, "[truncated: only the first %d of %d entries are shown; list a subfolder or read a file by name for the rest]\n", maxListEntries, n)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// entryLine is one line of a listing.
func entryLine(e fs.DirEntry) string {
	name := e.Name()
	if strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		name = strconv.Quote(name) // a newline in a name must not forge a line
	}
	switch t := e.Type(); {
	case t.IsDir():
		return name + "/"
	case t&fs.ModeSymlink != 0:
		return name + "@\tsymbolic link"
	case t.IsRegular():
		if info, err := e.Info(); err == nil {
			return fmt.Sprintf("%s\t%d bytes", name, info.Size())
		}
		return name
	default:
		return name + "\tspecial file"
	}
}

// writeFile is write_file.
type writeFile struct{}

type writeArgs struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

func (a *writeArgs) check() error {
	if a.Content == nil {
		return agent.Userf(nil, "invalid arguments for %s: argument \"content\" is required (a string; it may be empty)", NameWriteFile)
	}
	return nil
}

func (writeFile) DecodeArguments(raw json.RawMessage) (json.RawMessage, error) {
	return decoded[writeArgs](NameWriteFile, raw)
}

func (writeFile) NeedsApprovalByDefault() bool { return true }

func (writeFile) Spec() agent.ToolSpec {
	return agent.ToolSpec{
		Name: NameWriteFile,
		Description: "Write a text file inside the folders you are allowed to use, creating it or replacing all of its content. " +
			"Missing parent folders are created. The write is atomic: readers see the old content or the new, never a mix.",
		Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {
      "type": "string",
      "description": "The file to write: an absolute path, or a path relative to your first allowed folder."
    },
    "content": {
      "type": "string",
      "description": "The whole new content of the file."
    }
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`),
	}
}

func (writeFile) Call(ctx context.Context, a agent.Agent, raw json.RawMessage) (string, error) {
	var args writeArgs
	if err := decodeArgs(NameWriteFile, raw, &args); err != nil {
		return "", err
	}
	if err := args.check(); err != nil {
		return "", err
	}
	tg, root, err := openArg(ctx, NameWriteFile, a, args.Path)
	if err != nil {
		return "", err
	}
	defer root.Close()
	if tg.rel == "." {
		return "", agent.Userf(nil, "cannot write %q: it is an allowed folder, not a file", tg.given)
	}

	mode, verb := fs.FileMode(0o644), "Created"
	fi, err := root.Lstat(tg.rel)
	switch {
	case err == nil && fi.IsDir():
		return "", agent.Userf(nil, "cannot write %q: it is a folder, not a file", tg.given)
	case err == nil && !fi.Mode().IsRegular():
		// The path was resolved, so a link here appeared since; refuse it too.
		return "", agent.Userf(nil, "cannot write %q: it is not a regular file", tg.given)
	case err == nil:
		mode, verb = fi.Mode().Perm(), "Replaced"
	case !errors.Is(err, fs.ErrNotExist):
		return "", fileError("write", tg, err)
	}

	dir, name := filepath.Split(tg.rel)
	if dir = filepath.Clean(dir); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return "", fileError("write", tg, err)
		}
	}
	if err := replace(root, dir, name, tg.rel, []byte(*args.Content), mode); err != nil {
		return "", fileError("write", tg, err)
	}
	return fmt.Sprintf("%s %s (%d bytes).", verb, tg.real, len(*args.Content)), nil
}

// replace writes data to a temporary file in dir and renames it over
// rel, so the file is never seen half-written; the temporary file is
// removed on failure.
func replace(root *os.Root, dir, name, rel string, data []byte, mode fs.FileMode) (err error) {
	tmp := filepath.Join(dir, "."+name+"."+rand.Text()[:12]+".deskhand-tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			root.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return root.Rename(tmp, rel)
}
