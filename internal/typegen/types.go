package typegen

import (
	"encoding/json"
	"fmt"
	"strings"
)

// kind is the shape of a generated type.
type kind int

const (
	kindAny    kind = iota // any JSON value: json.RawMessage, unknown
	kindString             // string
	kindInt                // int64, number
	kindNumber             // float64, number
	kindBool               // bool, boolean
	kindArray              // []elem, elem[]
	kindMap                // map[string]elem, Record<string, elem>
	kindNamed              // a declared struct
)

// typeRef is a type as Go and TypeScript both render it.
type typeRef struct {
	kind kind
	elem *typeRef // kindArray, kindMap
	name string   // kindNamed
	// enum holds the allowed values as compact JSON; empty means any value
	// of the kind.
	enum     []json.RawMessage
	nullable bool
}

// decl is a named type: a struct (object) or an alias of another type.
type decl struct {
	name   string
	doc    string // doc comment text, starting with name
	object bool
	fields []fieldDecl
	alias  typeRef
}

// fieldDecl is one struct field, from one object property.
type fieldDecl struct {
	json     string
	goName   string
	doc      string
	typ      typeRef
	required bool
}

// typeBuilder turns JSON Schemas into declarations. Every declared name
// comes from names, which all of the generated package's identifiers share.
type typeBuilder struct {
	names *namer
	decls []*decl
	// known maps a canonical schema to the name of a shared type, so that
	// every route's todo list uses the one Todo type.
	known map[string]string
	// parsed and canonical cache work on schema texts seen before: every
	// route with a plan.md has the same writeTodos schema.
	parsed    map[string]*schema
	canonical map[string]string
}

// parse is parseSchema with a cache; a parsed schema is never modified.
func (b *typeBuilder) parse(raw []byte) (*schema, error) {
	if s, ok := b.parsed[string(raw)]; ok {
		return s, nil
	}
	s, err := parseSchema(raw)
	if err != nil {
		return nil, err
	}
	if b.parsed == nil {
		b.parsed = map[string]*schema{}
	}
	b.parsed[string(raw)] = s
	return s, nil
}

// shapeKey is the canonical form of s, for comparing object schemas.
func (b *typeBuilder) shapeKey(s *schema) (string, error) {
	if key, ok := b.canonical[string(s.raw)]; ok {
		return key, nil
	}
	key, err := canonicalJSON(s.raw)
	if err != nil {
		return "", err
	}
	if b.canonical == nil {
		b.canonical = map[string]string{}
	}
	b.canonical[string(s.raw)] = string(key)
	return string(key), nil
}

// scope is the building of one root type: the document its $refs point
// into, and the structs made so far, by canonical schema, so that a shape
// used twice in one tool's input gets one type.
type scope struct {
	root      *schema
	byShape   map[string]string
	resolving map[string]bool
}

func newScope(root *schema) *scope {
	return &scope{root: root, byShape: map[string]string{}, resolving: map[string]bool{}}
}

// declareKnown declares a shared struct type with a fixed name and makes
// every equal schema use it.
func (b *typeBuilder) declareKnown(name string, raw []byte, doc string) error {
	s, err := b.parse(raw)
	if err != nil {
		return fmt.Errorf("schema of %s: %v", name, err)
	}
	key, err := b.shapeKey(s)
	if err != nil {
		return fmt.Errorf("schema of %s: %v", name, err)
	}
	d := &decl{name: name, doc: doc, object: true}
	b.decls = append(b.decls, d)
	b.fillStruct(d, s, newScope(s))
	b.known[key] = name
	return nil
}

// declareRoot declares name (already unique) as the type of schema raw: a
// struct for an object schema with properties, otherwise an alias.
func (b *typeBuilder) declareRoot(name string, raw []byte, doc string) error {
	s, err := b.parse(raw)
	if err != nil {
		return err
	}
	sc := newScope(s)
	s = b.resolve(s, sc)
	if isStruct(s) {
		d := &decl{name: name, doc: doc, object: true}
		b.decls = append(b.decls, d)
		b.fillStruct(d, s, sc)
		return nil
	}
	d := &decl{name: name, doc: doc}
	b.decls = append(b.decls, d)
	d.alias = b.typeOf(s, name, name, sc)
	return nil
}

// declareStruct declares name (already unique) as a struct of the lead
// fields followed by one optional field per property, each property's
// schema a document of its own.
func (b *typeBuilder) declareStruct(name, doc string, lead []fieldDecl, props []property) *decl {
	d := &decl{name: name, doc: doc, object: true, fields: lead}
	b.decls = append(b.decls, d)
	fields := newNamer("", false)
	for _, f := range lead {
		fields.unique(f.goName)
	}
	for _, p := range props {
		d.fields = append(d.fields, b.field(d.name, p, false, fields, newScope(p.schema)))
	}
	return d
}

// isStruct reports whether s becomes a Go struct: an object schema with
// properties, all with names a json tag can hold, or a closed object with
// none.
func isStruct(s *schema) bool {
	if s.any || !s.isObject() {
		return false
	}
	if len(s.properties) == 0 {
		return s.closed
	}
	for _, p := range s.properties {
		if !validJSONTag(p.name) {
			return false
		}
	}
	return true
}

// isObject reports whether s describes a JSON object, by its type or, when
// it has none, by object keywords.
func (s *schema) isObject() bool {
	types, _ := s.nonNull()
	if len(types) == 0 {
		return len(s.properties) > 0 || s.closed || s.additional != nil
	}
	return len(types) == 1 && types[0] == "object"
}

func (b *typeBuilder) fillStruct(d *decl, s *schema, sc *scope) {
	fields := newNamer("", false)
	for _, p := range s.properties {
		d.fields = append(d.fields, b.field(d.name, p, s.isRequired(p.name), fields, sc))
	}
}

// field builds the struct field for property p of struct parent.
func (b *typeBuilder) field(parent string, p property, required bool, fields *namer, sc *scope) fieldDecl {
	goName := exportedName(p.name)
	if goName == "" {
		goName = "Field"
	}
	goName = fields.unique(goName)
	typ := b.typeOf(p.schema, parent+goName, parent+"."+goName, sc)
	return fieldDecl{json: p.name, goName: goName, doc: fieldDoc(b.resolve(p.schema, sc), typ), typ: typ, required: required}
}

// fieldDoc is a field's doc comment: its description and its allowed values.
func fieldDoc(s *schema, t typeRef) string {
	doc := strings.TrimSpace(s.description)
	for t.kind == kindArray && t.elem != nil && len(t.enum) == 0 {
		t = *t.elem
	}
	if len(t.enum) > 0 {
		values := make([]string, len(t.enum))
		for i, v := range t.enum {
			values[i] = string(v)
		}
		line := "One of " + strings.Join(values, ", ") + "."
		if len(t.enum) == 1 {
			line = "Always " + values[0] + "."
		}
		if doc != "" {
			doc += "\n\n"
		}
		doc += line
	}
	return doc
}

// resolve follows $ref into the scope's document and unwraps an anyOf or
// oneOf that only adds null. A $ref that cannot be followed, or that loops,
// gives "any".
func (b *typeBuilder) resolve(s *schema, sc *scope) *schema {
	for range maxSchemaDepth {
		switch {
		case s.ref != "":
			target, ok := sc.root.defs[s.ref]
			if s.ref == "#" {
				target, ok = sc.root, true
			}
			if !ok || sc.resolving[s.ref] {
				return &schema{any: true}
			}
			s = target
		case len(s.anyOf) > 0 && len(s.types) == 0 && len(s.properties) == 0:
			pick, nullable := nullableAlternative(s.anyOf)
			if pick == nil {
				return &schema{any: true}
			}
			if nullable {
				return withNull(b.resolve(pick, sc))
			}
			s = pick
		default:
			return s
		}
	}
	return &schema{any: true}
}

// nullableAlternative returns the one alternative of anyOf that is not
// just null, and whether another is; pick is nil when there are several.
func nullableAlternative(anyOf []*schema) (pick *schema, nullable bool) {
	for _, alt := range anyOf {
		if types, _ := alt.nonNull(); len(alt.types) > 0 && len(types) == 0 {
			nullable = true
			continue
		}
		if pick != nil {
			return nil, nullable
		}
		pick = alt
	}
	return pick, nullable
}

// withNull returns a copy of s that also allows null.
func withNull(s *schema) *schema {
	copied := *s
	copied.types = append(append([]string(nil), copied.types...), "null")
	if len(copied.types) == 1 { // only "null": the type was implied
		copied.types = nil
	}
	return &copied
}

// typeOf is the type of schema s. hint names a struct it needs to declare,
// and where says where the type is used, for that struct's doc comment.
func (b *typeBuilder) typeOf(s *schema, hint, where string, sc *scope) typeRef {
	ref := s.ref
	s = b.resolve(s, sc)
	if ref != "" {
		sc.resolving[ref] = true
		defer delete(sc.resolving, ref)
	}
	if s.any {
		return typeRef{kind: kindAny}
	}
	types, nullable := s.nonNull()
	if len(types) == 0 {
		switch {
		case s.isObject():
			types = []string{"object"}
		case s.items != nil:
			types = []string{"array"}
		case len(s.enum) > 0:
			types = []string{enumType(s.enum)}
		}
	}
	if len(types) != 1 {
		return typeRef{kind: kindAny}
	}
	var t typeRef
	switch types[0] {
	case "string":
		t = typeRef{kind: kindString, enum: enumOf(s.enum, "string")}
	case "integer":
		t = typeRef{kind: kindInt, enum: enumOf(s.enum, "integer")}
	case "number":
		t = typeRef{kind: kindNumber, enum: enumOf(s.enum, "number")}
	case "boolean":
		t = typeRef{kind: kindBool, enum: enumOf(s.enum, "boolean")}
	case "array":
		elem := typeRef{kind: kindAny}
		if s.items != nil {
			elem = b.typeOf(s.items, hint+"Item", "the items of "+where, sc)
		}
		t = typeRef{kind: kindArray, elem: &elem}
	case "object":
		t = b.objectType(s, hint, where, sc)
	default:
		return typeRef{kind: kindAny}
	}
	t.nullable = nullable
	return t
}

// objectType is a named struct for an object schema with properties, and a
// map otherwise.
func (b *typeBuilder) objectType(s *schema, hint, where string, sc *scope) typeRef {
	if !isStruct(s) {
		elem := typeRef{kind: kindAny}
		if s.additional != nil && len(s.properties) == 0 {
			elem = b.typeOf(s.additional, hint+"Value", "the values of "+where, sc)
		}
		return typeRef{kind: kindMap, elem: &elem}
	}
	key, err := b.shapeKey(s)
	if err == nil {
		if name, ok := b.known[key]; ok {
			return typeRef{kind: kindNamed, name: name}
		}
		if name, ok := sc.byShape[key]; ok {
			return typeRef{kind: kindNamed, name: name}
		}
	}
	name := b.names.unique(hint)
	if err == nil {
		sc.byShape[key] = name
	}
	d := &decl{name: name, doc: fmt.Sprintf("%s is the type of %s.", name, where), object: true}
	b.decls = append(b.decls, d)
	b.fillStruct(d, s, sc)
	return typeRef{kind: kindNamed, name: name}
}

// enumType guesses the type of an enum with no "type": the JSON Schema
// type every value has, or "" when they differ.
func enumType(enum []json.RawMessage) string {
	for _, typ := range []string{"string", "boolean", "integer", "number"} {
		all := true
		for _, v := range enum {
			all = all && jsonIsType(v, typ)
		}
		if all {
			return typ
		}
	}
	return ""
}

// enumOf keeps enum values that are of JSON Schema type typ; with any other
// value the enum is dropped (any value of the type is allowed).
func enumOf(enum []json.RawMessage, typ string) []json.RawMessage {
	for _, v := range enum {
		if !jsonIsType(v, typ) {
			return nil
		}
	}
	return enum
}

func jsonIsType(v json.RawMessage, typ string) bool {
	if len(v) == 0 {
		return false
	}
	switch typ {
	case "string":
		return v[0] == '"'
	case "boolean":
		return string(v) == "true" || string(v) == "false"
	case "integer":
		return (v[0] == '-' || ('0' <= v[0] && v[0] <= '9')) && !strings.ContainsAny(string(v), ".eE")
	case "number":
		return v[0] == '-' || ('0' <= v[0] && v[0] <= '9')
	}
	return false
}
