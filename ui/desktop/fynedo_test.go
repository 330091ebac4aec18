package desktop

import (
	"maps"
	"testing"

	"fyne.io/fyne/v2"
	"github.com/google/go-cmp/cmp"
)

func TestFyneToldOfFyneDo(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      fyne.AppMetadata
		want    fyne.AppMetadata
		changed bool
	}{
		{name: "go build: no metadata",
			in:      fyne.AppMetadata{Version: "0.0.1", Migrations: map[string]bool{}},
			want:    fyne.AppMetadata{ID: "io.deskhand.Deskhand", Name: "Deskhand", Version: "0.0.1", Migrations: map[string]bool{"fyneDo": true}},
			changed: true},
		{name: "nil migrations",
			in:      fyne.AppMetadata{ID: "x", Name: "X"},
			want:    fyne.AppMetadata{ID: "x", Name: "X", Migrations: map[string]bool{"fyneDo": true}},
			changed: true},
		{name: "said false, other migrations kept",
			in:      fyne.AppMetadata{ID: "x", Name: "X", Migrations: map[string]bool{"fyneDo": false, "other": true}},
			want:    fyne.AppMetadata{ID: "x", Name: "X", Migrations: map[string]bool{"fyneDo": true, "other": true}},
			changed: true},
		{name: "the fyne tool's build",
			in:   fyne.AppMetadata{ID: "x", Name: "X", Build: 7, Migrations: map[string]bool{"fyneDo": true}},
			want: fyne.AppMetadata{ID: "x", Name: "X", Build: 7, Migrations: map[string]bool{"fyneDo": true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := maps.Clone(tc.in.Migrations)
			got, changed := WithFyneDo(tc.in, "io.deskhand.Deskhand")
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.in.Migrations); diff != "" {
				t.Errorf("the metadata read was changed in place (-before +after):\n%s", diff)
			}
		})
	}
}
