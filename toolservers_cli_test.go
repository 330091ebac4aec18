package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
)

// deskhandIn runs the command line in-process with stdin.
func deskhandIn(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(t.Context(), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

// dataBytes is every file of the data folder but the secrets' fallback
// file: the database, its WAL and the logs.
func dataBytes(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "secrets.json" || d.Type()&os.ModeSocket != 0 {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		b.Write(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestToolServerCommands: add (secrets from stdin), list, check (the real
// server-filesystem), attach to an agent, remove; the secrets never reach
// the database, the logs or what the commands print, and a secret's value
// on the command line is refused without being repeated. Both on the
// store (no app running) and through the running app's control channel.
func TestToolServerCommands(t *testing.T) {
	for _, running := range []bool{false, true} {
		t.Run(map[bool]string{false: "on the store", true: "through the app"}[running], func(t *testing.T) {
			folder := t.TempDir()
			command, args := filesystemServer(t, folder)
			dir := t.TempDir()
			if running {
				dir = startServe(t, ollamatest.NewServer(t)).dir
			}
			const envSecret, headerSecret = "tok-env-93f1a7", "Bearer hdr-5be02c"
			var printed strings.Builder
			must := func(stdin string, args ...string) string {
				t.Helper()
				out, errOut, err := deskhandIn(t, stdin, append([]string{"--data", dir}, args...)...)
				printed.WriteString(out + errOut)
				if err != nil {
					t.Fatalf("deskhand %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
				}
				return out
			}

			add := append([]string{"toolserver", "add", "fs", "--command", command, "--env", "LEVEL=quiet", "--secret-env", "FS_TOKEN", "--"}, args...)
			must(envSecret+"\n", add...)
			must(headerSecret+"\n", "toolserver", "add", "web", "--url", "http://127.0.0.1:9/mcp?x=1", "--header", "X-Team=a", "--secret-header", "Authorization")

			// Refused: a value on the command line, a missing value, both transports, a duplicate.
			for _, bad := range []struct {
				stdin string
				args  []string
			}{
				{"", []string{"toolserver", "add", "leak", "--url", "http://127.0.0.1:9/", "--secret-header", "Authorization=" + headerSecret}},
				{"", []string{"toolserver", "add", "empty", "--url", "http://127.0.0.1:9/", "--secret-header", "Authorization"}},
				{"", []string{"toolserver", "add", "both", "--url", "http://127.0.0.1:9/", "--command", "x"}},
				{"", []string{"toolserver", "add", "fs", "--command", "x"}},
			} {
				out, errOut, err := deskhandIn(t, bad.stdin, append([]string{"--data", dir}, bad.args...)...)
				if err == nil {
					t.Errorf("deskhand %v was accepted", bad.args)
				}
				msg := out + errOut
				if err != nil {
					msg += agent.UserMessage(err) + err.Error()
				}
				printed.WriteString(msg)
			}

			list := must("", "toolserver", "list")
			for _, want := range []string{"fs", "stdio", "web", "http", "http://127.0.0.1:9/mcp", "stopped"} {
				if !strings.Contains(list, want) {
					t.Errorf("list lacks %q:\n%s", want, list)
				}
			}
			if strings.Contains(list, "x=1") {
				t.Errorf("list shows the URL's query:\n%s", list)
			}
			check := must("", "toolserver", "check", "fs")
			for _, want := range []string{"fs__list_directory", "fs__read_text_file", "read-only"} {
				if !strings.Contains(check, want) {
					t.Errorf("check lacks %q:\n%s", want, check)
				}
			}
			// Each command line runs its own servers; the app keeps its own running.
			if list = must("", "toolserver", "list"); running && !strings.Contains(list, "running") {
				t.Errorf("after check, list shows no running server:\n%s", list)
			}

			if !running {
				must("", "agent", "add", "helper")
			}
			slug := map[bool]string{false: "helper", true: "assistant"}[running]
			must("", "agent", "edit", slug, "--toolserver", "fs:read_text_file,list_directory", "--ask-first", "read_text_file")
			if _, _, err := deskhandIn(t, "", "--data", dir, "agent", "edit", slug, "--toolserver", "fs:no_such_tool"); err == nil {
				t.Error("attaching a tool the server lacks was accepted")
			}
			must("", "agent", "edit", slug, "--no-toolserver", "fs")
			must("", "agent", "edit", slug, "--toolserver", "web")

			must("", "toolserver", "remove", "web")
			if list := must("", "toolserver", "list"); strings.Contains(list, "web") {
				t.Errorf("web is still listed:\n%s", list)
			}
			must("", "toolserver", "remove", "fs")

			stored := dataBytes(t, dir)
			if !strings.Contains(stored, "FS_TOKEN") || !strings.Contains(stored, "Authorization") {
				t.Error("the secrets' names are not in the database: this test reads the wrong files")
			}
			for _, secret := range []string{envSecret, headerSecret, "hdr-5be02c"} {
				if strings.Contains(stored, secret) {
					t.Errorf("the secret %q is in the data folder's files", secret)
				}
				if strings.Contains(printed.String(), secret) {
					t.Errorf("the secret %q was printed", secret)
				}
			}
			// Removed servers take their secrets with them.
			if kept, err := os.ReadFile(filepath.Join(dir, "secrets.json")); err == nil {
				for _, secret := range []string{envSecret, headerSecret} {
					if strings.Contains(string(kept), secret) {
						t.Errorf("the secret %q outlived its server", secret)
					}
				}
			}
		})
	}
}
