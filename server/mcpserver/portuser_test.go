package mcpserver

import (
	"encoding/binary"
	"slices"
	"testing"
)

func TestLsofListener(t *testing.T) {
	for _, c := range []struct{ name, out, want string }{
		{"one", "p812\ncnginx\nf6\n", "nginx (pid 812)"},
		{"several", "p812\ncnginx\nf6\nf7\np813\ncnginx\nf6\np9001\ncpython3.12\nf3\n", "nginx (pid 812)"},
		{"no name", "p812\nf6\np813\ncnginx\n", "a process (pid 812)"},
		{"crlf", "p77\r\ncDeskhand Helper\r\n", "Deskhand Helper (pid 77)"},
		{"empty", "", ""},
		{"garbage", "lsof: unknown option\nusage: lsof ...\n", ""},
		{"bad pid", "pabc\ncnginx\n", ""},
		{"name before pid", "cnginx\n", ""},
	} {
		if got := lsofListener(c.out); got != c.want {
			t.Errorf("%s: lsofListener(%q) = %q, want %q", c.name, c.out, got, c.want)
		}
	}
}

// tcpTable builds a GetExtendedTcpTable table: count claims the number
// of rows, each row is (port, pid), and junk fills the port DWORD's
// upper half, which Windows leaves uninitialised.
func tcpTable(layout tcpRowLayout, count uint32, junk uint16, rows ...[2]uint32) []byte {
	table := binary.LittleEndian.AppendUint32(nil, count)
	for _, r := range rows {
		row := make([]byte, layout.size)
		for i := range row {
			row[i] = 0xEE // addresses, states and scope IDs: not read
		}
		binary.BigEndian.PutUint16(row[layout.port:], uint16(r[0]))
		binary.LittleEndian.PutUint16(row[layout.port+2:], junk)
		binary.LittleEndian.PutUint32(row[layout.pid:], r[1])
		table = append(table, row...)
	}
	return table
}

func TestTCPTableOwners(t *testing.T) {
	for _, layout := range []struct {
		name string
		rows tcpRowLayout
	}{{"ipv4", tcp4Rows}, {"ipv6", tcp6Rows}} {
		for _, c := range []struct {
			name  string
			table []byte
			want  []uint32
		}{
			{"one", tcpTable(layout.rows, 1, 0, [2]uint32{7345, 1234}), []uint32{1234}},
			{"among others", tcpTable(layout.rows, 3, 0xBEEF, [2]uint32{80, 4}, [2]uint32{7345, 1234}, [2]uint32{0xAD1C, 99}), []uint32{1234}},
			{"port bytes swapped", tcpTable(layout.rows, 1, 0, [2]uint32{0xB11C, 1}), nil}, // 7345 is 0x1CB1
			{"two owners", tcpTable(layout.rows, 2, 0, [2]uint32{7345, 10}, [2]uint32{7345, 11}), []uint32{10, 11}},
			{"none", tcpTable(layout.rows, 0, 0), nil},
			{"count past the end", tcpTable(layout.rows, 1000, 0, [2]uint32{7345, 5}), []uint32{5}},
			{"cut row", tcpTable(layout.rows, 1, 0, [2]uint32{7345, 5})[:layout.rows.size], nil},
			{"empty", nil, nil},
			{"short", []byte{1, 0}, nil},
		} {
			if got := tcpTableOwners(c.table, layout.rows, 7345); !slices.Equal(got, c.want) {
				t.Errorf("%s, %s: owners %v, want %v", layout.name, c.name, got, c.want)
			}
		}
	}
}
