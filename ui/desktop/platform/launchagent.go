package platform

import (
	"bytes"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/deskhand/deskhand/server/agent"
)

// launchAgentPlist is the macOS LaunchAgent that runs exe when the user
// logs in to the desktop (Aqua) session. Inside an app bundle exe is
// still the binary (Deskhand.app/Contents/MacOS/Deskhand), which is what
// ProgramArguments takes; launchd does not open bundles.
func launchAgentPlist(exe string) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + loginItemID + `</string>
	<key>ProgramArguments</key>
	<array>
		<string>`)
	_ = xml.EscapeText(&b, []byte(exe)) // a bytes.Buffer does not fail
	b.WriteString(`</string>
	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>ProcessType</key>
	<string>Interactive</string>
	<key>LimitLoadToSessionType</key>
	<string>Aqua</string>
</dict>
</plist>
`)
	return b.Bytes()
}

// launchAgent is the LaunchAgent file under a home folder. Writing it
// does not load it: launchd reads it at the next login, and loading it
// now would start a second Deskhand (RunAtLoad).
type launchAgent struct{ home string }

func (l launchAgent) path() string {
	return filepath.Join(l.home, "Library", "LaunchAgents", loginItemID+".plist")
}

// enabled tells whether the LaunchAgent exists and runs exe. A file it
// cannot read as an XML plist (plutil may have made it binary) runs
// something else as far as Deskhand can tell.
func (l launchAgent) enabled(exe string) (bool, error) {
	data, err := os.ReadFile(l.path())
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, agent.Userf(err, "cannot read %s", l.path())
	}
	return plistProgram(data) == exe, nil
}

// set writes the LaunchAgent that runs exe, or removes it.
func (l launchAgent) set(on bool, exe string) error {
	return setFile(l.path(), on, launchAgentPlist(exe))
}

// plistProgram is the first of a plist's ProgramArguments, "" when
// there is none or the XML is broken.
func plistProgram(data []byte) string {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	var lastKey string   // the text of the latest <key>
	inArguments := false // inside ProgramArguments' <array>
	for {
		tok, err := dec.Token()
		if err != nil { // io.EOF included: no program found
			return ""
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch {
		case start.Name.Local == "key":
			var k string
			if dec.DecodeElement(&k, &start) != nil {
				return ""
			}
			lastKey = strings.TrimSpace(k)
		case start.Name.Local == "array" && lastKey == "ProgramArguments":
			inArguments = true
		case start.Name.Local == "string" && inArguments:
			var s string
			if dec.DecodeElement(&s, &start) != nil {
				return ""
			}
			return s
		default:
			lastKey = ""
		}
	}
}
