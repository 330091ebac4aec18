package tools_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/tools"
)

func TestCatalogSpecs(t *testing.T) {
	catalog := tools.Catalog(tools.Options{})
	var names []string
	for _, tl := range catalog {
		spec := tl.Spec()
		names = append(names, spec.Name)
		t.Run(spec.Name, func(t *testing.T) {
			if spec.Description == "" {
				t.Error("no description")
			}
			var schema struct {
				Type                 string `json:"type"`
				Properties           map[string]map[string]any
				Required             []string
				AdditionalProperties *bool `json:"additionalProperties"`
			}
			if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
				t.Fatalf("Parameters are not valid JSON: %v\n%s", err, spec.Parameters)
			}
			if schema.Type != "object" {
				t.Errorf("type = %q, want object", schema.Type)
			}
			if schema.AdditionalProperties == nil || *schema.AdditionalProperties {
				t.Error("additionalProperties is not false, but unknown arguments are refused")
			}
			if schema.Properties == nil {
				t.Error("no properties")
			}
			for name, prop := range schema.Properties {
				if prop["type"] != "string" {
					t.Errorf("property %q has type %v", name, prop["type"])
				}
				if d, _ := prop["description"].(string); d == "" {
					t.Errorf("property %q has no description", name)
				}
			}
			for _, name := range schema.Required {
				if _, ok := schema.Properties[name]; !ok {
					t.Errorf("required %q is not a property", name)
				}
			}
		})
	}
	want := []string{tools.NameCurrentTime, tools.NameReadFile, tools.NameListDir, tools.NameWriteFile, tools.NameFetchURL}
	if !slices.Equal(names, want) {
		t.Errorf("catalog = %v, want %v", names, want)
	}
}

func TestApprovalDefaults(t *testing.T) {
	want := map[string]bool{tools.NameWriteFile: true, tools.NameFetchURL: true}
	for _, tl := range tools.Catalog(tools.Options{}) {
		got := false
		if d, ok := tl.(agent.ApprovalDefaulter); ok {
			got = d.NeedsApprovalByDefault()
		}
		if got != want[tl.Spec().Name] {
			t.Errorf("%s needs approval by default: %v, want %v", tl.Spec().Name, got, want[tl.Spec().Name])
		}
	}
}

func TestMalformedArgs(t *testing.T) {
	dir := t.TempDir()
	a := agent.Agent{Folders: []string{dir}}
	tests := []struct {
		tool, args string
		want       []string
	}{
		{tools.NameReadFile, `{"path": 5}`, []string{"read_file", `argument "path" must be a string, not number`}},
		{tools.NameReadFile, `{"path": "a.txt", "max_bytes": 100}`, []string{`unknown argument "max_bytes"`, `it accepts "path"`}},
		{tools.NameReadFile, `["a.txt"]`, []string{"must be a JSON object, not array"}},
		{tools.NameReadFile, `{"path": `, []string{"not valid JSON"}},
		{tools.NameReadFile, `{"path": "a"} {"path": "b"}`, []string{"unexpected data after the arguments object"}},
		{tools.NameReadFile, `{}`, []string{`argument "path" is required`}},
		{tools.NameReadFile, ``, []string{`argument "path" is required`}},
		{tools.NameReadFile, `{"path": ""}`, []string{`argument "path" is required`}},
		{tools.NameListDir, `"."`, []string{"list_dir", "must be a JSON object, not string"}},
		{tools.NameListDir, `{"path": null}`, []string{`argument "path" is required`}},
		{tools.NameListDir, `{"dir": "."}`, []string{`unknown argument "dir"`}},
		{tools.NameWriteFile, `{"path": "a.txt"}`, []string{`argument "content" is required`}},
		{tools.NameWriteFile, `{"path": "a.txt", "content": null}`, []string{`argument "content" is required`}},
		{tools.NameWriteFile, `{"path": "a.txt", "content": 3}`, []string{`argument "content" must be a string, not number`}},
		{tools.NameWriteFile, `{"path": true, "content": ""}`, []string{`argument "path" must be a string, not bool`}},
		{tools.NameWriteFile, `{"path": "a.txt", "content": "", "mode": "0777"}`, []string{`unknown argument "mode"`, `"path", "content"`}},
		{tools.NameCurrentTime, `{"timezone": 1}`, []string{`argument "timezone" must be a string`}},
		{tools.NameCurrentTime, `{"tz": "UTC"}`, []string{`unknown argument "tz"`, `it accepts "timezone"`}},
		{tools.NameCurrentTime, `42`, []string{"must be a JSON object, not number"}},
		{tools.NameFetchURL, `{"url": ["https://example.com"]}`, []string{`argument "url" must be a string, not array`}},
		{tools.NameFetchURL, `{}`, []string{`argument "url" is required`}},
		{tools.NameFetchURL, `{"url": "https://example.com", "method": "POST"}`, []string{`unknown argument "method"`}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			_, err := call(t, tool(t, tt.tool, tools.Options{}), a, tt.args)
			wantUserError(t, err, tt.want...)
		})
	}
}
