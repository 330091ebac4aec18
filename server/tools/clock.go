package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	// Embedded zone data, so every IANA name works where the system has
	// none (Windows).
	_ "time/tzdata"

	"github.com/deskhand/deskhand/server/agent"
)

// currentTime is current_time.
type currentTime struct{ now func() time.Time }

func (currentTime) Spec() agent.ToolSpec {
	return agent.ToolSpec{
		Name:        NameCurrentTime,
		Description: "Tell the current date and time (RFC 3339) and the day of the week, in the computer's time zone or in the one you name.",
		Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "timezone": {
      "type": "string",
      "description": "An IANA time zone name such as \"Europe/Paris\", \"America/New_York\" or \"UTC\"; omit it for the computer's local time zone."
    }
  },
  "additionalProperties": false
}`),
	}
}

type clockArgs struct {
	Timezone string `json:"timezone"`
}

func (currentTime) DecodeArguments(raw json.RawMessage) (json.RawMessage, error) {
	return decoded[clockArgs](NameCurrentTime, raw)
}

func (t currentTime) Call(_ context.Context, _ agent.Agent, raw json.RawMessage) (string, error) {
	var args clockArgs
	if err := decodeArgs(NameCurrentTime, raw, &args); err != nil {
		return "", err
	}
	now := t.now()
	zone := "the computer's local time zone"
	if args.Timezone != "" {
		loc, err := time.LoadLocation(args.Timezone)
		if err != nil {
			return "", agent.Userf(err, "unknown time zone %q: use an IANA time zone name such as \"Europe/Paris\", \"America/New_York\" or \"UTC\", or omit it for the computer's local time zone", args.Timezone)
		}
		now, zone = now.In(loc), args.Timezone
	} else {
		now = now.In(time.Local) // not LoadLocation(""), which is UTC
	}
	abbr, _ := now.Zone()
	return fmt.Sprintf("%s (%s) in %s (%s)", now.Format(time.RFC3339), now.Weekday(), zone, abbr), nil
}
