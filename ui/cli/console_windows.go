//go:build windows

package cli

import (
	"os"

	"golang.org/x/sys/windows"
)

var attachConsole = windows.NewLazySystemDLL("kernel32.dll").NewProc("AttachConsole")

// attachParentProcess is ATTACH_PARENT_PROCESS: the console of the
// process that started this one.
const attachParentProcess = ^uintptr(0)

// UseTerminal gives a command typed in a terminal somewhere to print.
// Deskhand for Windows is built as a GUI program, so that starting it from
// the Start menu or at login opens no console window; such a program
// starts with no standard handles, and a command typed in cmd or
// PowerShell would print nothing. Handles that were given (a client's
// pipes, a redirection) are kept as they are.
func UseTerminal() {
	std := []struct {
		handle uint32
		file   **os.File
		name   string
		flag   int
	}{
		{windows.STD_INPUT_HANDLE, &os.Stdin, "CONIN$", os.O_RDWR},
		{windows.STD_OUTPUT_HANDLE, &os.Stdout, "CONOUT$", os.O_WRONLY},
		{windows.STD_ERROR_HANDLE, &os.Stderr, "CONOUT$", os.O_WRONLY},
	}
	missing := std[:0:0]
	for _, s := range std {
		if h, err := windows.GetStdHandle(s.handle); err != nil || h == 0 || h == windows.InvalidHandle {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 {
		return
	}
	if ok, _, _ := attachConsole.Call(attachParentProcess); ok == 0 {
		return // started from Explorer or at login: there is no terminal
	}
	for _, s := range missing {
		if f, err := os.OpenFile(s.name, s.flag, 0); err == nil {
			*s.file = f
		}
	}
}
