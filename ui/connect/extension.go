package connect

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/deskhand/deskhand/store/atomicfile"
)

// ExtensionFile is the name the desktop and make package give the bundle.
const ExtensionFile = "Deskhand.mcpb"

// The platforms of a Claude Desktop extension, as Node's process.platform
// names them (the manifest's compatibility.platforms).
const (
	PlatformWindows = "win32"
	PlatformMac     = "darwin"
	PlatformLinux   = "linux"
)

// Extension is a Claude Desktop extension (.mcpb) to write: a ZIP with
// manifest.json at its root and the program under server/. Claude Desktop
// unpacks it into a folder of its own and runs the program with Args, as
// it runs the command of its config file's stdio entry; the program then
// bridges to the running app with the token kept in the keychain
// (deskhand stdio), so the bundle holds no token.
type Extension struct {
	Program string   // the deskhand program the bundle carries; its platform is read from its header
	Version string   // Deskhand's version: "dev", a tag (v1.2.3) or git describe's output
	Args    []string // the program's arguments; StdioArgs when nil
	Icon    []byte   // a PNG, carried as icon.png; none when empty
	// Progress, when set, is told how many of the program's bytes are in
	// the bundle so far, out of total.
	Progress func(done, total int64)
}

// ExtensionError says why a bundle was not written; nothing was.
type ExtensionError struct {
	Path    string // the file that was not written
	Problem string // for the person
	Err     error  // the cause, when there is one
}

func (e *ExtensionError) Error() string {
	if e.Err != nil {
		return e.Problem + ": " + e.Err.Error()
	}
	return e.Problem
}

func (e *ExtensionError) Unwrap() error { return e.Err }

// The manifest, version 0.3 (modelcontextprotocol/mcpb MANIFEST.md and
// schemas/mcpb-manifest-v0.3.schema.json at 27083dc).
type manifest struct {
	ManifestVersion string         `json:"manifest_version"`
	Name            string         `json:"name"`
	DisplayName     string         `json:"display_name"`
	Version         string         `json:"version"`
	Description     string         `json:"description"`
	LongDescription string         `json:"long_description"`
	Author          manifestAuthor `json:"author"`
	Icon            string         `json:"icon,omitempty"`
	Server          manifestServer `json:"server"`
	ToolsGenerated  bool           `json:"tools_generated"`
	Keywords        []string       `json:"keywords"`
	License         string         `json:"license"`
	Compatibility   manifestCompat `json:"compatibility"`
}

type manifestAuthor struct {
	Name string `json:"name"`
}

type manifestServer struct {
	Type       string         `json:"type"`
	EntryPoint string         `json:"entry_point"`
	MCPConfig  manifestLaunch `json:"mcp_config"`
}

type manifestLaunch struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

type manifestCompat struct {
	Platforms []string `json:"platforms"`
}

// extensionManifest is the manifest of a bundle whose program, for
// platform, sits at entry.
func extensionManifest(x Extension, platform, entry string) manifest {
	args := x.Args
	if args == nil {
		args = StdioArgs
	}
	m := manifest{
		ManifestVersion: "0.3",
		Name:            DefaultName,
		DisplayName:     "Deskhand",
		Version:         SemVer(x.Version),
		Description:     "Your own AI agents, served by the Deskhand app on this computer, as Claude's tools.",
		LongDescription: "Each agent you define in Deskhand is a tool here. The extension runs `deskhand stdio --client claude-desktop`: it reaches the Deskhand app running on this computer with Claude Desktop's own token, kept in the system keychain, or serves the agents itself when the app is not running.",
		Author:          manifestAuthor{Name: "The Deskhand developers"},
		Server: manifestServer{
			Type:       "binary",
			EntryPoint: entry,
			MCPConfig: manifestLaunch{
				Command: "${__dirname}/" + entry,
				Args:    append([]string(nil), args...),
				Env:     map[string]string{},
			},
		},
		ToolsGenerated: true,
		Keywords:       []string{"agents", "local", "mcp"},
		License:        "MIT",
		Compatibility:  manifestCompat{Platforms: []string{platform}},
	}
	if len(x.Icon) > 0 {
		m.Icon = "icon.png"
	}
	return m
}

// ExtensionManifest is the manifest.json WriteExtension writes for x, whose
// program is for platform (PlatformWindows, PlatformMac or PlatformLinux).
func ExtensionManifest(x Extension, platform string) ([]byte, error) {
	entry, err := entryPoint(platform)
	if err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(extensionManifest(x, platform, entry), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode the extension's manifest: %w", err)
	}
	return append(data, '\n'), nil
}

// entryPoint is where the program sits in a bundle for platform.
func entryPoint(platform string) (string, error) {
	switch platform {
	case PlatformWindows:
		return "server/deskhand.exe", nil
	case PlatformMac, PlatformLinux:
		return "server/deskhand", nil
	}
	return "", fmt.Errorf("no Claude Desktop extension for platform %q", platform)
}

// ProgramPlatform reads which system the program in r runs on from its
// header: a PE executable is win32, a Mach-O executable (or a universal
// one) darwin, an ELF executable for Linux linux. Anything else (a shared
// library, a script, another system's program) is an error.
func ProgramPlatform(r io.ReaderAt) (string, error) {
	var magic [4]byte
	if _, err := r.ReadAt(magic[:], 0); err != nil {
		return "", errors.New("not a program for Windows, macOS or Linux")
	}
	switch {
	case bytes.HasPrefix(magic[:], []byte("MZ")):
		f, err := pe.NewFile(r)
		if err != nil {
			break
		}
		defer f.Close()
		if f.Characteristics&pe.IMAGE_FILE_EXECUTABLE_IMAGE == 0 || f.Characteristics&pe.IMAGE_FILE_DLL != 0 {
			return "", errors.New("a Windows library or object file, not a program")
		}
		return PlatformWindows, nil
	case bytes.Equal(magic[:], []byte("\x7fELF")):
		f, err := elf.NewFile(r)
		if err != nil {
			break
		}
		defer f.Close()
		if f.OSABI != elf.ELFOSABI_NONE && f.OSABI != elf.ELFOSABI_LINUX {
			return "", fmt.Errorf("a program for %v, which Claude Desktop does not run on", f.OSABI)
		}
		if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN || f.Entry == 0 {
			return "", fmt.Errorf("an ELF file of type %v, not a program", f.Type)
		}
		return PlatformLinux, nil
	case binary.BigEndian.Uint32(magic[:]) == macho.MagicFat:
		f, err := macho.NewFatFile(r)
		if err != nil {
			break
		}
		defer f.Close()
		for _, a := range f.Arches {
			if a.Type != macho.TypeExec {
				return "", fmt.Errorf("a universal Mach-O file whose %v part is of type %v, not a program", a.Cpu, a.Type)
			}
		}
		return PlatformMac, nil
	default:
		f, err := macho.NewFile(r)
		if err != nil {
			break
		}
		defer f.Close()
		if f.Type != macho.TypeExec {
			return "", fmt.Errorf("a Mach-O file of type %v, not a program", f.Type)
		}
		return PlatformMac, nil
	}
	return "", errors.New("not a program for Windows, macOS or Linux")
}

// WriteExtension writes the bundle of x to path (which must end in .mcpb),
// whole or not at all: it is written to a temporary file beside path and
// renamed over it once complete, so a failure or a cancelled ctx leaves
// path as it was. The program's platform is read from its header
// (ProgramPlatform) and returned; the program is stored with mode 0755,
// which macOS and Linux unpackers restore, so that it stays executable.
// Every error is an *ExtensionError.
func WriteExtension(ctx context.Context, path string, x Extension) (platform string, err error) {
	fail := func(cause error, format string, args ...any) (string, error) {
		return "", &ExtensionError{Path: path, Problem: fmt.Sprintf(format, args...), Err: cause}
	}
	if !strings.EqualFold(filepath.Ext(path), ".mcpb") {
		return fail(nil, "%s does not end in .mcpb: Claude Desktop opens only .mcpb files as extensions", path)
	}
	prog, err := os.Open(x.Program)
	if err != nil {
		return fail(err, "cannot read the program %s", x.Program)
	}
	defer prog.Close()
	info, err := prog.Stat()
	if err != nil {
		return fail(err, "cannot read the program %s", x.Program)
	}
	if !info.Mode().IsRegular() {
		return fail(nil, "the program %s is not a file", x.Program)
	}
	platform, err = ProgramPlatform(prog)
	if err != nil {
		return fail(err, "%s is not a program Claude Desktop can run", x.Program)
	}
	entry, _ := entryPoint(platform)
	if out, err := os.Lstat(path); err == nil {
		switch {
		case os.SameFile(out, info):
			return fail(nil, "%s is the program itself: write the extension to another file", path)
		case out.Mode()&fs.ModeSymlink != 0:
			return fail(nil, "%s is a symbolic link: write the extension to the file it leads to", path)
		case !out.Mode().IsRegular():
			return fail(nil, "%s exists and is not a file", path)
		}
	}
	if len(x.Icon) > 0 && !bytes.HasPrefix(x.Icon, []byte("\x89PNG\r\n\x1a\n")) {
		return fail(nil, "the extension's icon is not a PNG")
	}
	data, err := json.MarshalIndent(extensionManifest(x, platform, entry), "", "  ")
	if err != nil {
		return fail(err, "cannot encode the extension's manifest")
	}

	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fail(err, "cannot write in %s", dir)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := writeBundle(ctx, tmp, prog, info, entry, append(data, '\n'), x); err != nil {
		if ctx.Err() != nil {
			return fail(ctx.Err(), "stopped writing %s", path)
		}
		return fail(err, "cannot write %s", path)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fail(err, "cannot write %s", path)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err, "cannot write %s", path)
	}
	if err := tmp.Close(); err != nil {
		return fail(err, "cannot write %s", path)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fail(err, "cannot write %s", path)
	}
	done = true
	atomicfile.SyncDir(dir)
	return platform, nil
}

// writeBundle writes the ZIP: manifest.json, the program at entry
// (mode 0755) and icon.png.
func writeBundle(ctx context.Context, w io.Writer, prog io.Reader, info fs.FileInfo, entry string, manifest []byte, x Extension) error {
	z := zip.NewWriter(w)
	// The fastest deflate: a third of the default level's time (on an
	// 80 MB program, under a second instead of about three) for a file
	// some 9% larger.
	z.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestSpeed)
	})
	add := func(name string, mode fs.FileMode) (io.Writer, error) {
		h := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: info.ModTime()}
		h.SetMode(mode)
		return z.CreateHeader(h)
	}
	f, err := add("manifest.json", 0o644)
	if err == nil {
		_, err = f.Write(manifest)
	}
	if err != nil {
		return fmt.Errorf("manifest.json: %w", err)
	}
	if len(x.Icon) > 0 {
		f, err := add("icon.png", 0o644)
		if err == nil {
			_, err = f.Write(x.Icon)
		}
		if err != nil {
			return fmt.Errorf("icon.png: %w", err)
		}
	}
	f, err = add(entry, 0o755)
	if err != nil {
		return fmt.Errorf("%s: %w", entry, err)
	}
	n, err := io.Copy(f, &progressReader{ctx: ctx, r: prog, total: info.Size(), report: x.Progress})
	if err != nil {
		return fmt.Errorf("%s: %w", entry, err)
	}
	if n != info.Size() {
		return fmt.Errorf("%s: read %d bytes of the program's %d: it changed while it was read", entry, n, info.Size())
	}
	return z.Close()
}

// progressReader reads r, reports how much it read and stops when ctx ends.
type progressReader struct {
	ctx         context.Context
	r           io.Reader
	done, total int64
	report      func(done, total int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	if err := p.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := p.r.Read(b)
	p.done += int64(n)
	if p.report != nil && n > 0 {
		p.report(p.done, p.total)
	}
	return n, err
}

// semverRE is semver.org's regular expression for a version.
var semverRE = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

// describeRE is git describe's TAG-N-gHASH.
var describeRE = regexp.MustCompile(`^(.+)-(\d+)-g([0-9a-f]+)$`)

// SemVer maps Deskhand's version to the semantic version the manifest
// needs: a tag v1.2.3 is 1.2.3; git describe's v1.2.3-4-gabc1234[-dirty]
// is 1.2.3+4.gabc1234[.dirty] (the commits after the tag as build
// metadata); anything else ("dev", a bare commit hash) is 0.0.0-dev, with
// the text as build metadata.
func SemVer(v string) string {
	v = strings.TrimSpace(v)
	var meta []string
	rest, dirty := strings.CutSuffix(v, "-dirty")
	if m := describeRE.FindStringSubmatch(rest); m != nil {
		rest, meta = m[1], []string{m[2], "g" + m[3]}
	}
	if dirty {
		meta = append(meta, "dirty")
	}
	if tag := strings.TrimPrefix(rest, "v"); semverRE.MatchString(tag) {
		return withMeta(tag, meta)
	}
	if v == "" || v == "dev" {
		return "0.0.0-dev"
	}
	return withMeta("0.0.0-dev", strings.FieldsFunc(v, func(r rune) bool {
		return !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}))
}

// withMeta adds build metadata to a semantic version.
func withMeta(version string, meta []string) string {
	if len(meta) == 0 {
		return version
	}
	sep := "+"
	if strings.Contains(version, "+") {
		sep = "."
	}
	return version + sep + strings.Join(meta, ".")
}
