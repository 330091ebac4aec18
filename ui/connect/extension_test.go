package connect

import (
	"archive/zip"
	"bytes"
	"context"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Program headers, built here rather than checked in: the smallest file
// each debug package reads as a program of its system.

func peProgram(t *testing.T, characteristics uint16) []byte {
	t.Helper()
	var b bytes.Buffer
	dos := make([]byte, 0x80) // the DOS header and stub
	copy(dos, "MZ")
	binary.LittleEndian.PutUint32(dos[0x3c:], 0x80) // e_lfanew: the PE header follows
	b.Write(dos)
	b.WriteString("PE\x00\x00")
	must(t, binary.Write(&b, binary.LittleEndian, pe.FileHeader{Machine: pe.IMAGE_FILE_MACHINE_AMD64, Characteristics: characteristics}))
	return b.Bytes()
}

func machoHeader(t *testing.T, typ macho.Type) []byte {
	t.Helper()
	var b bytes.Buffer
	must(t, binary.Write(&b, binary.LittleEndian, macho.FileHeader{Magic: macho.Magic64, Cpu: macho.CpuArm64, Type: typ}))
	b.Write(make([]byte, 4)) // the 64-bit header's reserved word
	return b.Bytes()
}

// machoUniversal is a universal (fat) file of two Mach-O parts.
func machoUniversal(t *testing.T, typ macho.Type) []byte {
	t.Helper()
	part := machoHeader(t, typ)
	var b bytes.Buffer
	must(t, binary.Write(&b, binary.BigEndian, []uint32{macho.MagicFat, 2}))
	off := uint32(8 + 2*20)
	for i, cpu := range []macho.Cpu{macho.CpuAmd64, macho.CpuArm64} {
		must(t, binary.Write(&b, binary.BigEndian, macho.FatArchHeader{Cpu: cpu, Offset: off + uint32(i*len(part)), Size: uint32(len(part))}))
	}
	b.Write(part)
	b.Write(part)
	return b.Bytes()
}

func elfProgram(t *testing.T, abi elf.OSABI, typ elf.Type) []byte {
	t.Helper()
	h := elf.Header64{Type: uint16(typ), Machine: uint16(elf.EM_X86_64), Version: uint32(elf.EV_CURRENT), Entry: 0x401000, Ehsize: 64, Phentsize: 56, Shentsize: 64}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	h.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	h.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	h.Ident[elf.EI_OSABI] = byte(abi)
	var b bytes.Buffer
	must(t, binary.Write(&b, binary.LittleEndian, h))
	return b.Bytes()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// hostPlatform is the platform this test runs on, as a manifest names it.
func hostPlatform(t *testing.T) string {
	switch runtime.GOOS {
	case "windows":
		return PlatformWindows
	case "darwin":
		return PlatformMac
	case "linux":
		return PlatformLinux
	}
	t.Skipf("no Claude Desktop platform for %s", runtime.GOOS)
	return ""
}

func TestProgramPlatform(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	host, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	const exe = pe.IMAGE_FILE_EXECUTABLE_IMAGE | pe.IMAGE_FILE_LARGE_ADDRESS_AWARE
	tests := []struct {
		name    string
		file    []byte
		want    string
		wantErr string
	}{
		{"this test program", host, hostPlatform(t), ""},
		{"Windows program", peProgram(t, exe), PlatformWindows, ""},
		{"Windows library", peProgram(t, exe|pe.IMAGE_FILE_DLL), "", "a Windows library"},
		{"Windows object file", peProgram(t, 0), "", "a Windows library"},
		{"Mach-O program", machoHeader(t, macho.TypeExec), PlatformMac, ""},
		{"Mach-O library", machoHeader(t, macho.TypeDylib), "", "not a program"},
		{"universal Mach-O program", machoUniversal(t, macho.TypeExec), PlatformMac, ""},
		{"universal Mach-O library", machoUniversal(t, macho.TypeDylib), "", "not a program"},
		{"Linux program", elfProgram(t, elf.ELFOSABI_NONE, elf.ET_EXEC), PlatformLinux, ""},
		{"Linux position-independent program", elfProgram(t, elf.ELFOSABI_LINUX, elf.ET_DYN), PlatformLinux, ""},
		{"Linux object file", elfProgram(t, elf.ELFOSABI_NONE, elf.ET_REL), "", "not a program"},
		{"FreeBSD program", elfProgram(t, elf.ELFOSABI_FREEBSD, elf.ET_EXEC), "", "Claude Desktop does not run on"},
		{"shell script", []byte("#!/bin/sh\nexec deskhand \"$@\"\n"), "", "not a program for Windows, macOS or Linux"},
		{"zeros", make([]byte, 512), "", "not a program for Windows, macOS or Linux"},
		{"Java class", []byte("\xca\xfe\xba\xbe\x00\x00\x00\x41"), "", "not a program for Windows, macOS or Linux"},
		{"empty file", nil, "", "not a program for Windows, macOS or Linux"},
		{"truncated Windows program", peProgram(t, exe)[:0x84], "", "not a program for Windows, macOS or Linux"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ProgramPlatform(bytes.NewReader(tt.file))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ProgramPlatform = %q, %v; want an error saying %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ProgramPlatform = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestSemVer(t *testing.T) {
	tests := []struct{ in, want string }{
		{"dev", "0.0.0-dev"},
		{"", "0.0.0-dev"},
		{"v1.2.3", "1.2.3"},
		{"1.2.3", "1.2.3"},
		{"v1.2.3-rc.1", "1.2.3-rc.1"},
		{"v1.2.3-4-gabc1234", "1.2.3+4.gabc1234"},
		{"v1.2.3-4-gabc1234-dirty", "1.2.3+4.gabc1234.dirty"},
		{"v1.2.3-rc.1-12-gdeadbee", "1.2.3-rc.1+12.gdeadbee"},
		{"v1.2.3-dirty", "1.2.3+dirty"},
		{"v1.2.3+meta-4-gabc1234", "1.2.3+meta.4.gabc1234"},
		{"7476452", "0.0.0-dev+7476452"}, // git describe --always with no tag
		{"7476452-dirty", "0.0.0-dev+7476452-dirty"},
		{"v1.2", "0.0.0-dev+v1.2"},
		{"v01.2.3", "0.0.0-dev+v01.2.3"},
		{"weird/version with spaces", "0.0.0-dev+weird.version.with.spaces"},
	}
	for _, tt := range tests {
		got := SemVer(tt.in)
		if got != tt.want {
			t.Errorf("SemVer(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !semverRE.MatchString(got) {
			t.Errorf("SemVer(%q) = %q, not a semantic version", tt.in, got)
		}
	}
}

// manifestSchema is the published schema of manifest version 0.3
// (testdata/README.md says where it comes from).
func manifestSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "mcpb-manifest-v0.3.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	const url = "mem:///mcpb/mcpb-manifest-v0.3.schema.json"
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	must(t, c.AddResource(url, doc))
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validateManifest(s *jsonschema.Schema, data []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.Validate(doc)
}

func TestExtensionManifestSchema(t *testing.T) {
	s := manifestSchema(t)
	png := []byte("\x89PNG\r\n\x1a\n")
	tests := []struct {
		name     string
		x        Extension
		platform string
		edit     func(m map[string]any) // breaks the manifest, to show the schema bites
		wantErr  bool
	}{
		{"Windows", Extension{Version: "dev"}, PlatformWindows, nil, false},
		{"macOS, icon", Extension{Version: "v1.2.3", Icon: png}, PlatformMac, nil, false},
		{"Linux, another data folder", Extension{Version: "v1.2.3-4-gabc1234-dirty", Args: []string{"stdio", "--client", "claude-desktop", "--data", `C:\Users\a b\Deskhand`}}, PlatformLinux, nil, false},
		{"an unknown server type fails", Extension{}, PlatformWindows, func(m map[string]any) {
			m["server"].(map[string]any)["type"] = "go"
		}, true},
		{"overrides beside mcp_config fail", Extension{}, PlatformWindows, func(m map[string]any) {
			m["server"].(map[string]any)["platform_overrides"] = map[string]any{}
		}, true},
		{"an unknown platform fails", Extension{}, PlatformWindows, func(m map[string]any) {
			m["compatibility"].(map[string]any)["platforms"] = []string{"windows"}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := ExtensionManifest(tt.x, tt.platform)
			if err != nil {
				t.Fatal(err)
			}
			if tt.edit != nil {
				var m map[string]any
				must(t, json.Unmarshal(data, &m))
				tt.edit(m)
				if data, err = json.Marshal(m); err != nil {
					t.Fatal(err)
				}
			}
			err = validateManifest(s, data)
			if tt.wantErr != (err != nil) {
				t.Fatalf("validate = %v, want an error: %v\n%s", err, tt.wantErr, data)
			}
		})
	}
	if _, err := ExtensionManifest(Extension{}, "freebsd"); err == nil {
		t.Error("a manifest for freebsd was made")
	}
}

// readBundle reads a written bundle's entries by name.
func readBundle(t *testing.T, path string) map[string]*zip.File {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { z.Close() })
	files := map[string]*zip.File{}
	for _, f := range z.File {
		files[f.Name] = f
	}
	return files
}

func readEntry(t *testing.T, f *zip.File) []byte {
	t.Helper()
	r, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestWriteExtension(t *testing.T) {
	s := manifestSchema(t)
	program := func(t *testing.T, data []byte) string {
		p := filepath.Join(t.TempDir(), "program")
		must(t, os.WriteFile(p, data, 0o755))
		return p
	}
	// A program's header followed by a body, so that the content check
	// covers more than the header.
	body := bytes.Repeat([]byte("deskhand "), 100_000)
	winProg := append(peProgram(t, pe.IMAGE_FILE_EXECUTABLE_IMAGE), body...)
	macProg := append(machoUniversal(t, macho.TypeExec), body...)
	linuxProg := append(elfProgram(t, elf.ELFOSABI_NONE, elf.ET_EXEC), body...)
	icon := []byte("\x89PNG\r\n\x1a\nnot really an image")
	dataArgs := []string{"stdio", "--client", "claude-desktop", "--data", "/home/a/other data"}
	tests := []struct {
		name     string
		prog     []byte
		x        Extension
		entry    string
		platform string
		args     []string
	}{
		{"Windows", winProg, Extension{Version: "dev"}, "server/deskhand.exe", PlatformWindows, StdioArgs},
		{"macOS with an icon", macProg, Extension{Version: "v2.0.0", Icon: icon}, "server/deskhand", PlatformMac, StdioArgs},
		{"Linux, another data folder", linuxProg, Extension{Version: "v2.0.0-1-gabcdef0", Args: dataArgs}, "server/deskhand", PlatformLinux, dataArgs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := tt.x
			x.Program = program(t, tt.prog)
			var last, total int64
			x.Progress = func(done, all int64) { last, total = done, all }
			out := filepath.Join(t.TempDir(), "Deskhand.mcpb")
			platform, err := WriteExtension(context.Background(), out, x)
			if err != nil || platform != tt.platform {
				t.Fatalf("WriteExtension = %q, %v; want %q", platform, err, tt.platform)
			}
			if last != int64(len(tt.prog)) || total != last {
				t.Errorf("progress ended at %d of %d, want %d of %d", last, total, len(tt.prog), len(tt.prog))
			}
			files := readBundle(t, out)
			var names []string
			for n := range files {
				names = append(names, n)
			}
			slices.Sort(names)
			want := []string{"manifest.json", tt.entry}
			if x.Icon != nil {
				want = append(want, "icon.png")
			}
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Fatalf("bundle holds %v, want %v", names, want)
			}
			if got := files[tt.entry].Mode(); got != 0o755 {
				t.Errorf("%s has mode %v, want 0755 (executable once unpacked)", tt.entry, got)
			}
			if got := readEntry(t, files[tt.entry]); !bytes.Equal(got, tt.prog) {
				t.Errorf("%s differs from the program (%d bytes, want %d)", tt.entry, len(got), len(tt.prog))
			}
			if x.Icon != nil && !bytes.Equal(readEntry(t, files["icon.png"]), icon) {
				t.Error("icon.png differs from the icon")
			}
			data := readEntry(t, files["manifest.json"])
			if err := validateManifest(s, data); err != nil {
				t.Errorf("manifest.json does not validate: %v\n%s", err, data)
			}
			var m manifest
			must(t, json.Unmarshal(data, &m))
			if m.Server.EntryPoint != tt.entry || m.Server.MCPConfig.Command != "${__dirname}/"+tt.entry {
				t.Errorf("entry_point %q, command %q; want %q under ${__dirname}", m.Server.EntryPoint, m.Server.MCPConfig.Command, tt.entry)
			}
			if !slices.Equal(m.Server.MCPConfig.Args, tt.args) {
				t.Errorf("args %q, want %q", m.Server.MCPConfig.Args, tt.args)
			}
			if !slices.Equal(m.Compatibility.Platforms, []string{tt.platform}) {
				t.Errorf("platforms %q, want [%s]", m.Compatibility.Platforms, tt.platform)
			}
			if m.Version != SemVer(x.Version) || m.Name != "deskhand" || m.ManifestVersion != "0.3" {
				t.Errorf("name %q, version %q, manifest_version %q", m.Name, m.Version, m.ManifestVersion)
			}
			if (m.Icon == "icon.png") != (x.Icon != nil) {
				t.Errorf("icon %q with an icon of %d bytes", m.Icon, len(x.Icon))
			}
			if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("the bundle's mode: %v, %v; want 0644", fi.Mode(), err)
			}
			onlyFile(t, filepath.Dir(out), "Deskhand.mcpb")
		})
	}
}

// onlyFile fails unless dir holds want and nothing else (no temporary file).
func onlyFile(t *testing.T, dir, want string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want == "" && len(names) == 0 || len(names) == 1 && names[0] == want {
		return
	}
	t.Errorf("%s holds %v, want only %q", dir, names, want)
}

// TestWriteExtensionRefuses: a bundle that cannot be written right is not
// written at all, and what was at the path stays.
func TestWriteExtensionRefuses(t *testing.T) {
	good := append(peProgram(t, pe.IMAGE_FILE_EXECUTABLE_IMAGE), make([]byte, 1<<20)...)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		prog    []byte // nil: no program file
		out     string // in the folder; "program" is the program itself
		icon    []byte
		ctx     context.Context
		wantErr string
	}{
		{"a script", []byte("#!/bin/sh\n"), "Deskhand.mcpb", nil, nil, "is not a program Claude Desktop can run"},
		{"a Windows library", peProgram(t, pe.IMAGE_FILE_EXECUTABLE_IMAGE|pe.IMAGE_FILE_DLL), "Deskhand.mcpb", nil, nil, "a Windows library"},
		{"no program", nil, "Deskhand.mcpb", nil, nil, "cannot read the program"},
		{"not .mcpb", good, "Deskhand.zip", nil, nil, "does not end in .mcpb"},
		{"over the program", good, "program", nil, nil, "does not end in .mcpb"},
		{"an icon that is no PNG", good, "Deskhand.mcpb", []byte("GIF89a"), nil, "icon is not a PNG"},
		{"cancelled", good, "Deskhand.mcpb", nil, cancelled, "stopped writing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			prog := filepath.Join(dir, "program")
			if tt.prog != nil {
				must(t, os.WriteFile(prog, tt.prog, 0o755))
			}
			out := filepath.Join(dir, tt.out)
			before := []byte("the bundle written before")
			if tt.out != "program" {
				must(t, os.WriteFile(out, before, 0o644))
			} else {
				before = tt.prog
			}
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			_, err := WriteExtension(ctx, out, Extension{Program: prog, Version: "dev", Icon: tt.icon})
			var xerr *ExtensionError
			if !errors.As(err, &xerr) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("WriteExtension = %v, want an ExtensionError saying %q", err, tt.wantErr)
			}
			if got, _ := os.ReadFile(out); !bytes.Equal(got, before) {
				t.Errorf("%s changed: %q", tt.out, got)
			}
			want := []string{"program", tt.out}
			if tt.prog == nil {
				want = want[1:]
			}
			ents, _ := os.ReadDir(dir)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			slices.Sort(want)
			want = slices.Compact(want)
			if !slices.Equal(names, want) {
				t.Errorf("the folder holds %v, want %v (nothing left behind)", names, want)
			}
		})
	}
}

// TestWriteExtensionSamePath: the program named as the bundle is refused
// before anything is written over it.
func TestWriteExtensionSamePath(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "deskhand.mcpb") // a program oddly named
	data := peProgram(t, pe.IMAGE_FILE_EXECUTABLE_IMAGE)
	must(t, os.WriteFile(prog, data, 0o755))
	_, err := WriteExtension(context.Background(), prog, Extension{Program: prog})
	if err == nil || !strings.Contains(err.Error(), "is the program itself") {
		t.Fatalf("WriteExtension = %v, want a refusal", err)
	}
	if got, _ := os.ReadFile(prog); !bytes.Equal(got, data) {
		t.Error("the program was overwritten")
	}
	onlyFile(t, dir, "deskhand.mcpb")
}
