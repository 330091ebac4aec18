package connector_test

import (
	"archive/zip"
	"bytes"
	"context"
	"debug/elf"
	"debug/pe"
	"encoding/binary"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/assets"
	"github.com/deskhand/deskhand/ui/connect"
	"github.com/deskhand/deskhand/ui/desktop/connector"
)

// TestConnectorExtension: the Connect tab's extension is written into the
// data folder with the config entry's arguments (here another data
// folder), is installable by opening it only when it is for Windows or
// macOS, and a failure says the problem alone (the cause goes to the log)
// and writes nothing.
func TestConnectorExtension(t *testing.T) {
	windows := make([]byte, 0x80+4+20)
	copy(windows, "MZ")
	binary.LittleEndian.PutUint32(windows[0x3c:], 0x80)
	copy(windows[0x80:], "PE\x00\x00")
	binary.LittleEndian.PutUint16(windows[0x84:], pe.IMAGE_FILE_MACHINE_AMD64)
	binary.LittleEndian.PutUint16(windows[0x84+18:], pe.IMAGE_FILE_EXECUTABLE_IMAGE)
	var linux bytes.Buffer
	h := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_X86_64), Version: uint32(elf.EV_CURRENT), Entry: 0x401000, Ehsize: 64}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS], h.Ident[elf.EI_DATA], h.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	if err := binary.Write(&linux, binary.LittleEndian, h); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name            string
		program         []byte // nil: none
		wantInstallable bool
		wantErr         string
	}{
		{"Windows", windows, true, ""},
		{"Linux", linux.Bytes(), false, ""},
		{"no program", nil, false, "cannot read the program"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, data := t.TempDir(), t.TempDir()
			program := filepath.Join(dir, "deskhand")
			if tt.program != nil {
				if err := os.WriteFile(program, tt.program, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			m, err := connect.NewManager(data, filepath.Join(dir, "default"), "", program, "http://127.0.0.1:7345/mcp", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			c := connector.New(m, slog.New(slog.NewTextHandler(&logs, nil)), connect.Extension{Program: program, Version: "v1.2.3", Icon: assets.Icon.Content()},
				filepath.Join(data, connect.ExtensionFile))
			var done int64
			path, installable, err := c.Extension(context.Background(), func(d, _ int64) { done = d })
			if tt.wantErr != "" {
				// The problem alone, as the person reads it; the cause (the
				// system's error) in the log.
				if err == nil || err.Error() != tt.wantErr+" "+program || !strings.Contains(logs.String(), "err=") {
					t.Errorf("err %v, log %q; want %q for the person, the cause in the log", err, logs.String(), tt.wantErr)
				}
				if ents, _ := os.ReadDir(data); len(ents) != 0 {
					t.Errorf("left in the data folder: %v", ents)
				}
				return
			}
			if err != nil || path != filepath.Join(data, connect.ExtensionFile) || installable != tt.wantInstallable || done != int64(len(tt.program)) {
				t.Fatalf("Extension = %q, %v, %v (progress %d); want the data folder's, %v", path, installable, err, done, tt.wantInstallable)
			}
			z, err := zip.OpenReader(path)
			if err != nil {
				t.Fatal(err)
			}
			defer z.Close()
			f, err := z.Open("manifest.json")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var manifest struct {
				Version string `json:"version"`
				Server  struct {
					MCPConfig struct {
						Args []string `json:"args"`
					} `json:"mcp_config"`
				} `json:"server"`
			}
			if err := json.NewDecoder(f).Decode(&manifest); err != nil {
				t.Fatal(err)
			}
			if want := []string{"stdio", "--client", "claude-desktop", "--data", data}; !slices.Equal(manifest.Server.MCPConfig.Args, want) || manifest.Version != "1.2.3" {
				t.Errorf("args %q, version %q; want %q, 1.2.3", manifest.Server.MCPConfig.Args, manifest.Version, want)
			}
		})
	}
}

// TestStateSpeaksPlainly: an entry that does not work says why and what
// Repair does, not the command line's "connected, stale".
func TestStateSpeaksPlainly(t *testing.T) {
	for _, h := range []connect.Health{connect.TokenRefused, connect.NoToken, connect.Stale, connect.Broken} {
		r := connect.Report{Client: connect.Cursor, State: connect.State{Condition: connect.Connected}, Check: connect.Check{Health: h}}
		st := connector.State(r, nil)
		if strings.Contains(st.Status, h.String()) || !strings.Contains(st.Status, "Repair") || st.Working {
			t.Errorf("%v: status %q; want plain words that name Repair", h, st.Status)
		}
	}
	ok := connector.State(connect.Report{Client: connect.Cursor, State: connect.State{Condition: connect.Connected}, Check: connect.Check{Health: connect.Verified, Tools: 3}}, nil)
	if !ok.Working || strings.Contains(ok.Status, "Repair") {
		t.Errorf("a working entry: %+v", ok)
	}
}
