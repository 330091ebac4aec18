package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/deskhand/deskhand/server/agent"
)

// Structured output.
//
// The SDK v2.15 has Anthropic's structured outputs (generally available):
// MessageNewParams.OutputConfig.Format, sent as
// "output_config": {"format": {"type": "json_schema", "schema": …}}. The
// reply's text is then JSON in the schema's shape, so Chat returns it as
// the reply's content like any text. This is used rather than the older
// way of forcing a tool (tool_choice {"type":"tool","name":"respond"}),
// which would also stop the model from calling the agent's own tools in
// the same request.
//
// The API accepts a subset of JSON Schema there: every object must have
// "additionalProperties": false, and numeric, string-length and most array
// constraints are refused. outputSchema adapts a schema by the rules of
// the SDK's own transform for its helpers (schemautil.go,
// transformSchema, in anthropic-sdk-go v2.15.0): $ref stands alone;
// oneOf becomes anyOf; objects with properties get additionalProperties
// false, objects with neither properties nor additionalProperties get
// empty properties and additionalProperties false; string formats outside
// the supported list and minItems other than 0 or 1 are dropped; every
// keyword the API does not take is dropped and named at the end of the
// schema's description, as "{minimum: 1, maxLength: 80}", so the model
// still reads it. Unlike the SDK's transform it keeps the order of
// properties (which the model answers in), keeps "definitions" beside
// "$defs" (a $ref may point into either), drops the annotations $schema,
// $id and $comment silently, and reads a schema with properties but no
// type as an object. The core checks the answer against the schema as
// the agent gave it, so what is dropped here is still enforced there.

// supportedKeys are the keywords the API takes in a structured-output
// schema (the SDK's supportedSchemaKeys, with "definitions").
var supportedKeys = map[string]bool{
	"$ref": true, "$defs": true, "definitions": true, "type": true, "anyOf": true, "oneOf": true, "allOf": true,
	"description": true, "title": true, "enum": true, "const": true, "properties": true,
	"additionalProperties": true, "required": true, "items": true, "minItems": true, "format": true, "pattern": true,
}

// silentKeys are annotations dropped without a word in the description.
var silentKeys = map[string]bool{"$schema": true, "$id": true, "$comment": true}

// supportedFormats are the string formats the API takes (the SDK's
// supportedStringFormats).
var supportedFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}

// outputSchema adapts the response schema for output_config.format. The
// result's values are JSON texts, so that the order inside them survives
// the SDK's encoding of the map.
func outputSchema(schema json.RawMessage) (map[string]any, error) {
	v, err := decodeOrdered(schema)
	obj, ok := v.(*object)
	if err != nil || !ok {
		if err == nil {
			err = errors.New("not a JSON object")
		}
		return nil, agent.Userf(fmt.Errorf("anthropic: response schema: %w", err), "the response schema is not a JSON Schema object")
	}
	obj = transform(obj)
	out := make(map[string]any, len(obj.keys))
	for _, k := range obj.keys {
		b, err := json.Marshal(obj.vals[k])
		if err != nil {
			return nil, err
		}
		out[k] = json.RawMessage(b)
	}
	return out, nil
}

// transform adapts one schema (see the comment at the top).
func transform(s *object) *object {
	if ref, ok := s.vals["$ref"]; ok {
		return newObject("$ref", ref)
	}
	out := &object{vals: map[string]any{}}
	extras := &object{vals: map[string]any{}}
	for _, k := range s.keys {
		v := s.vals[k]
		switch {
		case silentKeys[k]:
		case !supportedKeys[k]:
			extras.set(k, v)
		default:
			out.set(k, v)
		}
	}
	for _, defs := range []string{"$defs", "definitions"} {
		if d, ok := out.vals[defs].(*object); ok {
			out.set(defs, mapValues(d, schemaOf))
		}
	}
	if one, ok := out.vals["oneOf"]; ok {
		if _, has := out.vals["anyOf"]; !has {
			out.rename("oneOf", "anyOf", one)
		} else {
			out.del("oneOf")
		}
	}
	for _, k := range []string{"anyOf", "allOf"} {
		if list, ok := out.vals[k].([]any); ok {
			kept := make([]any, 0, len(list))
			for _, item := range list {
				kept = append(kept, schemaOf(item))
			}
			out.set(k, kept)
		}
	}
	typ, _ := out.vals["type"].(string)
	_, hasType := out.vals["type"]
	_, hasProps := out.vals["properties"].(*object)
	if typ == "object" || typ == "" && hasProps {
		switch ap, hasAP := out.vals["additionalProperties"]; {
		case hasProps:
			out.set("properties", mapValues(out.vals["properties"].(*object), schemaOf))
			out.set("additionalProperties", false)
		case hasAP && ap != false && ap != true:
			out.set("additionalProperties", schemaOf(ap)) // a dictionary: keep its value schema
		default:
			out.set("properties", &object{vals: map[string]any{}})
			out.set("additionalProperties", false)
		}
		if !hasType {
			out.set("type", "object")
		}
	}
	if f, ok := out.vals["format"].(string); ok && (typ != "string" && typ != "" || !slices.Contains(supportedFormats, f)) {
		extras.set("format", f)
		out.del("format")
	}
	if items, ok := out.vals["items"]; ok {
		if list, isList := items.([]any); isList { // draft-07 tuple
			kept := make([]any, 0, len(list))
			for _, item := range list {
				kept = append(kept, schemaOf(item))
			}
			out.set("items", kept)
		} else {
			out.set("items", schemaOf(items))
		}
	}
	if n, ok := out.vals["minItems"].(json.Number); ok && n.String() != "0" && n.String() != "1" {
		extras.set("minItems", n)
		out.del("minItems")
	}
	if len(extras.keys) > 0 {
		note := describeExtras(extras)
		if d, ok := out.vals["description"].(string); ok && d != "" {
			out.set("description", d+"\n\n"+note)
		} else {
			out.set("description", note)
		}
	}
	return out
}

// schemaOf transforms v if it is a schema object; true and false (and
// anything else) stay as they are.
func schemaOf(v any) any {
	if o, ok := v.(*object); ok {
		return transform(o)
	}
	return v
}

func mapValues(o *object, f func(any) any) *object {
	out := &object{vals: make(map[string]any, len(o.keys))}
	for _, k := range o.keys {
		out.set(k, f(o.vals[k]))
	}
	return out
}

// describeExtras words the dropped keywords as the SDK does: sorted,
// "{name: value, …}", strings bare, anything else as JSON.
func describeExtras(extras *object) string {
	keys := slices.Clone(extras.keys)
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := extras.vals[k]
		var s string
		switch v := v.(type) {
		case string:
			s = v
		case json.Number:
			s = v.String()
		default:
			b, _ := json.Marshal(v)
			s = string(b)
		}
		parts = append(parts, k+": "+s)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// object is a JSON object that keeps the order of its keys.
type object struct {
	keys []string
	vals map[string]any
}

func newObject(k string, v any) *object {
	o := &object{vals: map[string]any{}}
	o.set(k, v)
	return o
}

func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) del(k string) {
	if _, ok := o.vals[k]; ok {
		delete(o.vals, k)
		o.keys = slices.DeleteFunc(o.keys, func(s string) bool { return s == k })
	}
}

// rename puts v under the key to in place of from.
func (o *object) rename(from, to string, v any) {
	i := slices.Index(o.keys, from)
	delete(o.vals, from)
	o.keys[i] = to
	o.vals[to] = v
}

func (o *object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		buf.Write(kb)
		buf.WriteByte(':')
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// decodeOrdered reads one JSON value: objects as *object, arrays as
// []any, numbers as json.Number.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &object{vals: map[string]any{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			o.set(k, v) // a repeated key: the last value, at the first place
		}
		_, err := dec.Token() // '}'
		return o, err
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token() // ']'
		return list, err
	}
	return tok, nil
}
