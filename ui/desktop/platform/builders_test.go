package platform

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from what is built:\n got: %s\nwant: %s", path, got, want)
	}
}

// unixPaths are executables with the characters each format must escape.
var unixPaths = []struct{ name, exe string }{
	{"plain", "/usr/bin/deskhand"},
	{"space", "/home/ann lee/bin/deskhand"},
	{"ampersand", "/opt/R&D <tools>/deskhand"},
	{"quote", `/home/o"brien/it's/deskhand`},
	{"shell", "/tmp/a\\b/$HOME/%f/`x`/deskhand"},
	{"bundle", "/Applications/Deskhand.app/Contents/MacOS/Deskhand"},
}

func TestXDGEntry(t *testing.T) {
	for _, c := range unixPaths {
		t.Run(c.name, func(t *testing.T) {
			entry := xdgEntry(c.exe)
			golden(t, "xdg-"+c.name+".desktop", []byte(entry))
			_, value, _ := strings.Cut(entry, "\nExec=")
			value, _, _ = strings.Cut(value, "\n")
			if got := execArgs(t, value); len(got) != 1 || got[0] != c.exe {
				t.Errorf("Exec=%s runs %q, not %q", value, got, c.exe)
			}
		})
	}
}

// execArgs reads an Exec value as the Desktop Entry spec says a launcher
// does: the string escapes, then the field codes (only %% here), then
// the quoting.
func execArgs(t *testing.T, value string) []string {
	t.Helper()
	var s strings.Builder
	for i := 0; i < len(value); i++ {
		if value[i] == '\\' && i+1 < len(value) {
			i++
			s.WriteByte(map[byte]byte{'s': ' ', 'n': '\n', 't': '\t', 'r': '\r', '\\': '\\'}[value[i]])
			continue
		}
		s.WriteByte(value[i])
	}
	unescaped := s.String()
	if strings.Contains(strings.ReplaceAll(unescaped, "%%", ""), "%") {
		t.Errorf("a field code in %q", unescaped)
	}
	cmd := strings.ReplaceAll(unescaped, "%%", "%")
	var args []string
	var arg strings.Builder
	quoted, inArg := false, false
	for i := 0; i < len(cmd); i++ {
		switch ch := cmd[i]; {
		case quoted && ch == '\\' && i+1 < len(cmd) && strings.IndexByte("\"`$\\", cmd[i+1]) >= 0:
			i++
			arg.WriteByte(cmd[i])
		case quoted && strings.IndexByte("\"`$\\", ch) >= 0 && ch != '"':
			t.Errorf("an unescaped %q inside the quotes of %q", ch, cmd)
		case ch == '"':
			quoted, inArg = !quoted, true
		case !quoted && ch == ' ':
			if inArg {
				args = append(args, arg.String())
				arg.Reset()
				inArg = false
			}
		case !quoted && strings.IndexByte("\t\n'\\><~|&;$*?#()`", ch) >= 0:
			t.Errorf("a reserved %q outside quotes in %q", ch, cmd)
		default:
			arg.WriteByte(ch)
			inArg = true
		}
	}
	if quoted {
		t.Errorf("unbalanced quotes in %q", cmd)
	}
	if inArg {
		args = append(args, arg.String())
	}
	return args
}

func TestLaunchAgentPlist(t *testing.T) {
	for _, c := range unixPaths {
		t.Run(c.name, func(t *testing.T) {
			plist := launchAgentPlist(c.exe)
			golden(t, "launchagent-"+c.name+".plist", plist)
			if got := plistProgram(plist); got != c.exe {
				t.Errorf("the plist runs %q, not %q", got, c.exe)
			}
		})
	}
}

func TestPlistProgram(t *testing.T) {
	for _, c := range []struct{ name, plist, want string }{
		{"empty", "", ""},
		{"garbage", "not xml <", ""},
		{"no arguments", `<plist><dict><key>Label</key><string>x</string></dict></plist>`, ""},
		{"program first", `<plist><dict><key>ProgramArguments</key><array><string>/a</string><string>-b</string></array></dict></plist>`, "/a"},
		{"label before", `<plist><dict><key>Label</key><string>x</string><key>ProgramArguments</key><array><string>/a &amp; b</string></array></dict></plist>`, "/a & b"},
		{"another array", `<plist><dict><key>WatchPaths</key><array><string>/w</string></array></dict></plist>`, ""},
		{"broken", `<plist><dict><key>ProgramArguments</key><array><string>/a</array></dict></plist>`, ""},
	} {
		if got := plistProgram([]byte(c.plist)); got != c.want {
			t.Errorf("%s: plistProgram = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestRunValue(t *testing.T) {
	for _, c := range []struct{ name, exe string }{
		{"plain", `C:\Users\ann\AppData\Local\Programs\Deskhand\Deskhand.exe`},
		{"space", `C:\Program Files\Deskhand\Deskhand.exe`},
		{"ampersand", `C:\Users\R&D\Deskhand.exe`},
		{"quote", `C:\Users\O'Brien\Deskhand.exe`}, // Windows paths cannot hold a double quote
	} {
		t.Run(c.name, func(t *testing.T) {
			golden(t, "run-"+c.name+".txt", []byte(runValue(c.exe)+"\n"))
		})
	}
}
