// Package locale, imported for its side effect, names English for
// messages where the locale is the POSIX one ("C", "C.UTF-8", "POSIX":
// minimal shells, containers, CI). fyne cannot parse it and printed an
// error for it from every command, the command-line ones included. It runs
// at start, before fyne first reads the locale; nothing else reads it.
package locale

import "os"

func init() {
	for _, key := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		switch os.Getenv(key) {
		case "":
			continue
		case "C", "POSIX", "C.UTF-8", "C.utf8":
			if key == "LC_ALL" { // it overrides the others
				os.Setenv("LC_ALL", "en_US.UTF-8")
			} else {
				os.Setenv("LC_MESSAGES", "en_US.UTF-8")
			}
		}
		return
	}
}
