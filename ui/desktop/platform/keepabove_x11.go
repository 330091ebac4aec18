//go:build unix && !darwin && cgo

package platform

/*
#cgo LDFLAGS: -lX11
#include <stdlib.h>
#include <X11/Xlib.h>
#include <X11/Xatom.h>

static int ignoreXError(Display *d, XErrorEvent *e) { return 0; }

// keepAbove adds _NET_WM_STATE_ABOVE to the window's state: through the
// window manager (a client message to the root window, per EWMH) once
// the window is mapped, and in the property the window manager reads when
// it maps the window before that. It opens its own connection: window IDs
// are the server's, and fyne's display is not ours to share. An X error
// (say the window is gone) is ignored rather than ending the process.
static int keepAbove(unsigned long win) {
	Display *d = XOpenDisplay(NULL);
	if (d == NULL) return 1;
	int (*previous)(Display *, XErrorEvent *) = XSetErrorHandler(ignoreXError);
	Atom state = XInternAtom(d, "_NET_WM_STATE", False);
	Atom above = XInternAtom(d, "_NET_WM_STATE_ABOVE", False);
	XWindowAttributes attrs;
	if (XGetWindowAttributes(d, (Window)win, &attrs) && attrs.map_state == IsUnmapped) {
		XChangeProperty(d, (Window)win, state, XA_ATOM, 32, PropModeAppend, (unsigned char *)&above, 1);
	} else {
		XEvent e = {0};
		e.xclient.type = ClientMessage;
		e.xclient.window = (Window)win;
		e.xclient.message_type = state;
		e.xclient.format = 32;
		e.xclient.data.l[0] = 1; // _NET_WM_STATE_ADD
		e.xclient.data.l[1] = (long)above;
		e.xclient.data.l[2] = 0;
		e.xclient.data.l[3] = 1; // the request comes from an application
		XSendEvent(d, DefaultRootWindow(d), False, SubstructureRedirectMask | SubstructureNotifyMask, &e);
	}
	XSync(d, False);
	XSetErrorHandler(previous);
	XCloseDisplay(d);
	return 0;
}
*/
import "C"

import "errors"

// x11Built tells tests that KeepAbove talks to an X server here.
const x11Built = true

// keepAbove asks an EWMH window manager (most X11 desktops) to keep the
// window above the others; other windows systems here (Wayland) have no
// such request, and their windows come as no X11 ID.
func keepAbove(w Window) error {
	if w.X11 == 0 {
		return nil
	}
	if C.keepAbove(C.ulong(w.X11)) != 0 {
		return errors.New("keep a window above: cannot open the X display")
	}
	return nil
}
