package mcpfill

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
)

// Cursors makes opaque list cursors: the last name listed, with an HMAC
// under a key of this process, so a cursor is valid only here and until a
// restart. They are standard base64, which mcp-go insists on.
type Cursors struct{ key []byte }

// NewCursors makes cursors under a fresh random key.
func NewCursors() *Cursors {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read never fails
	return &Cursors{key: key}
}

const cursorVersion = 1

func (c *Cursors) mac(name string) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte{cursorVersion})
	m.Write([]byte(name))
	return m.Sum(nil)[:16]
}

// Encode is the cursor of the page after the name last listed.
func (c *Cursors) Encode(last string) string {
	b := []byte{cursorVersion}
	b = binary.AppendUvarint(b, uint64(len(last)))
	b = append(b, last...)
	b = append(b, c.mac(last)...)
	return base64.StdEncoding.EncodeToString(b)
}

// Decode returns the cursor's last name; "" with ok for no cursor. ok is
// false for a cursor these did not make.
func (c *Cursors) Decode(cursor string) (last string, ok bool) {
	if cursor == "" {
		return "", true
	}
	b, err := base64.StdEncoding.DecodeString(cursor)
	if err != nil || len(b) < 1 || b[0] != cursorVersion {
		return "", false
	}
	n, k := binary.Uvarint(b[1:])
	if k <= 0 || n > uint64(len(b)) {
		return "", false
	}
	rest := b[1+k:]
	if uint64(len(rest)) != n+16 {
		return "", false
	}
	name, mac := string(rest[:n]), rest[n:]
	if !hmac.Equal(mac, c.mac(name)) {
		return "", false
	}
	return name, true
}
