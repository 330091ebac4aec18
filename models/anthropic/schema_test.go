package anthropic

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/server/agent"
)

// TestOutputSchema follows the cases of the SDK's TestTransformSchemaMap
// (schemautil_test.go, anthropic-sdk-go v2.15.0), then the ways this
// transform differs from it.
func TestOutputSchema(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			name: "basic integer with unsupported properties",
			in:   `{"type":"integer","minimum":1,"maximum":10,"description":"A number"}`,
			want: `{"type":"integer","description":"A number\n\n{maximum: 10, minimum: 1}"}`,
		},
		{
			name: "object with properties",
			in:   `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name"],"additionalProperties":true}`,
			want: `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name"],"additionalProperties":false}`,
		},
		{
			name: "string with supported format",
			in:   `{"type":"string","format":"date-time"}`,
			want: `{"type":"string","format":"date-time"}`,
		},
		{
			name: "string with unsupported format",
			in:   `{"type":"string","format":"binary"}`,
			want: `{"type":"string","description":"{format: binary}"}`,
		},
		{
			name: "array with minItems 1",
			in:   `{"type":"array","items":{"type":"string"},"minItems":1}`,
			want: `{"type":"array","items":{"type":"string"},"minItems":1}`,
		},
		{
			name: "array with minItems 5",
			in:   `{"type":"array","items":{"type":"string"},"minItems":5}`,
			want: `{"type":"array","items":{"type":"string"},"description":"{minItems: 5}"}`,
		},
		{
			name: "schema with $ref",
			in:   `{"$ref":"#/definitions/Person","type":"object"}`,
			want: `{"$ref":"#/definitions/Person"}`,
		},
		{
			name: "oneOf becomes anyOf",
			in:   `{"oneOf":[{"type":"string"},{"type":"number"}]}`,
			want: `{"anyOf":[{"type":"string"},{"type":"number"}]}`,
		},
		{
			name: "schema with $defs",
			in:   `{"type":"object","$defs":{"Person":{"type":"object","properties":{"name":{"type":"string"}}}},"properties":{"user":{"$ref":"#/$defs/Person"}}}`,
			want: `{"type":"object","$defs":{"Person":{"type":"object","properties":{"name":{"type":"string"}},"additionalProperties":false}},
				"properties":{"user":{"$ref":"#/$defs/Person"}},"additionalProperties":false}`,
		},
		{
			name: "false child schemas stay false",
			in:   `{"type":"object","properties":{"x":false,"y":{"type":"array","items":false}}}`,
			want: `{"type":"object","properties":{"x":false,"y":{"type":"array","items":false}},"additionalProperties":false}`,
		},
		{
			name: "an object without properties gets none, closed",
			in:   `{"type":"object"}`,
			want: `{"type":"object","properties":{},"additionalProperties":false}`,
		},
		{
			name: "a dictionary keeps its value schema",
			in:   `{"type":"object","additionalProperties":{"type":"integer","maximum":3}}`,
			want: `{"type":"object","additionalProperties":{"type":"integer","description":"{maximum: 3}"}}`,
		},
		// Where this transform differs from the SDK's.
		{
			name: "annotations dropped silently",
			in:   `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x","$comment":"c","type":"string","default":"a"}`,
			want: `{"type":"string","description":"{default: a}"}`,
		},
		{
			name: "definitions kept beside $defs",
			in:   `{"type":"object","definitions":{"P":{"type":"object","properties":{"n":{"type":"string","maxLength":9}}}},"properties":{"p":{"$ref":"#/definitions/P"}}}`,
			want: `{"type":"object","definitions":{"P":{"type":"object","properties":{"n":{"type":"string","description":"{maxLength: 9}"}},"additionalProperties":false}},
				"properties":{"p":{"$ref":"#/definitions/P"}},"additionalProperties":false}`,
		},
		{
			name: "properties without a type are an object",
			in:   `{"properties":{"a":{"type":"string"}}}`,
			want: `{"properties":{"a":{"type":"string"}},"additionalProperties":false,"type":"object"}`,
		},
		{
			name: "a nullable object keeps its type list",
			in:   `{"type":["object","null"],"properties":{"a":{"type":"string"}}}`,
			want: `{"type":["object","null"],"properties":{"a":{"type":"string"}},"additionalProperties":false}`,
		},
		{
			name: "a format on a number is dropped",
			in:   `{"type":"integer","format":"int64"}`,
			want: `{"type":"integer","description":"{format: int64}"}`,
		},
		{
			name: "nested in anyOf, allOf and items",
			in:   `{"anyOf":[{"type":"object","properties":{"a":{"type":"number","multipleOf":2}}}],"allOf":[{"type":"object"}],"items":[{"type":"string","pattern":"^a"}]}`,
			want: `{"anyOf":[{"type":"object","properties":{"a":{"type":"number","description":"{multipleOf: 2}"}},"additionalProperties":false}],
				"allOf":[{"type":"object","properties":{},"additionalProperties":false}],"items":[{"type":"string","pattern":"^a"}]}`,
		},
		{
			name: "appended to a description, with JSON for non-strings",
			in:   `{"type":"array","description":"Tags.","items":{"type":"string"},"uniqueItems":true,"examples":[["a"]]}`,
			want: `{"type":"array","description":"Tags.\n\n{examples: [[\"a\"]], uniqueItems: true}","items":{"type":"string"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := outputSchema(json.RawMessage(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			json.Unmarshal(b, &g)
			if err := json.Unmarshal([]byte(tt.want), &w); err != nil {
				t.Fatalf("bad want: %v", err)
			}
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("schema (-want +got):\n%s\n%s", diff, b)
			}
		})
	}
}

func TestOutputSchemaKeepsOrder(t *testing.T) {
	got, err := outputSchema(json.RawMessage(`{"type":"object","properties":{"reasoning":{"type":"string"},"answer":{"type":"string"},"confidence":{"type":"number"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if props := string(got["properties"].(json.RawMessage)); props != `{"reasoning":{"type":"string"},"answer":{"type":"string"},"confidence":{"type":"number"}}` {
		t.Errorf("properties = %s", props)
	}
}

func TestOutputSchemaRefusesNonObjects(t *testing.T) {
	for _, in := range []string{`true`, `[]`, `"x"`, `{"type":`, `{} {}`} {
		_, err := outputSchema(json.RawMessage(in))
		var ue *agent.UserError
		if !errors.As(err, &ue) || ue.Msg != "the response schema is not a JSON Schema object" {
			t.Errorf("outputSchema(%s) = %v", in, err)
		}
	}
}
