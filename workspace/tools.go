package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/thread"
)

// Names of the tools the capability contributes.
const (
	ReadFile  = "readFile"
	WriteFile = "writeFile"
	EditFile  = "editFile"
	ListDir   = "listDir"
	Glob      = "glob"
)

// Field is the state field that holds a thread's virtual tree (a Tree).
const Field = "files"

// space is the workspace of one route.
type space struct {
	// dir is the real folder, absolute; "" for the thread's virtual tree.
	dir string
	// approve are the globs whose writes wait for a person.
	approve []string
	route   string
	now     func() time.Time
}

// open returns the backend for a call with state s; close releases it.
func (sp *space) open(s thread.State) (b backend, tree Tree, close func(), err error) {
	if sp.dir == "" {
		tree, err := decodeTree(s[Field])
		if err != nil {
			return nil, nil, nil, err
		}
		return &treeBackend{tree: tree, now: sp.now}, tree, func() {}, nil
	}
	if err := os.MkdirAll(sp.dir, 0o755); err != nil {
		return nil, nil, nil, fmt.Errorf("the workspace folder cannot be created: %w", err)
	}
	root, err := os.OpenRoot(sp.dir)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("the workspace folder cannot be opened: %w", err)
	}
	return &rootBackend{root: root}, nil, func() { root.Close() }, nil
}

// decodeTree reads the state field's value; absent or null is empty.
func decodeTree(raw json.RawMessage) (Tree, error) {
	tree := Tree{}
	if len(raw) == 0 || string(raw) == "null" {
		return tree, nil
	}
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, fmt.Errorf("the thread's %s state field is not a file tree: %w", Field, err)
	}
	return tree, nil
}

// fileTool is one of the capability's tools.
type fileTool struct {
	spec capabilities.ToolSpec
	sp   *space
	// run does the call on b; changed says it wrote. It stops when ctx
	// ends.
	run func(ctx context.Context, b backend, in json.RawMessage) (out any, changed bool, err error)
}

func (t *fileTool) Spec() capabilities.ToolSpec { return t.spec }

func (t *fileTool) Call(ctx context.Context, inv capabilities.Invocation) (capabilities.Result, error) {
	b, tree, closeFn, err := t.sp.open(inv.State)
	if err != nil {
		return capabilities.Result{}, err
	}
	defer closeFn()
	out, changed, err := t.run(ctx, b, inv.Input)
	if err != nil {
		return capabilities.Result{}, err
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return capabilities.Result{}, err
	}
	res := capabilities.Result{Output: raw}
	if changed && tree != nil {
		update, err := json.Marshal(tree)
		if err != nil {
			return capabilities.Result{}, err
		}
		res.Update = thread.State{Field: update}
	}
	return res, nil
}

// decode reads a tool's input into v, refusing unknown fields.
func decode(tool string, in json.RawMessage, v any) error {
	if len(in) == 0 {
		in = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &capabilities.InputError{Tool: tool, Msg: err.Error()}
	}
	return nil
}

func (sp *space) tools() []capabilities.Tool {
	where := "the thread's workspace (a virtual file tree kept with the conversation)"
	if sp.dir != "" {
		where = "the route's workspace folder"
	}
	tool := func(name, desc, schema string, run func(context.Context, backend, json.RawMessage) (any, bool, error)) capabilities.Tool {
		return &fileTool{spec: capabilities.ToolSpec{Name: name, Description: desc, Schema: json.RawMessage(schema)}, sp: sp, run: run}
	}
	return []capabilities.Tool{
		tool(ReadFile, "Read a text file of "+where+". Paths are relative to the workspace root, e.g. notes/todo.md. offset (0-based) and limit pick lines.",
			`{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer","minimum":0},"limit":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`,
			readFile),
		tool(WriteFile, "Write a text file of "+where+", creating it and its folders or replacing it whole.",
			`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`,
			writeFile),
		tool(EditFile, "Edit a text file of "+where+" by replacing oldString, copied exactly from the file, with newString. oldString must occur once, or set replaceAll.",
			`{"type":"object","properties":{"path":{"type":"string"},"oldString":{"type":"string"},"newString":{"type":"string"},"replaceAll":{"type":"boolean"}},"required":["path","oldString","newString"],"additionalProperties":false}`,
			editFile),
		tool(ListDir, "List a folder of "+where+": each entry's name, type (file or dir) and size. Without path it lists the root.",
			`{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":false}`,
			listDir),
		tool(Glob, "Find the files of "+where+" whose paths match a glob: * and ? within a name, ** across folders; a pattern without / matches file names at any depth (*.md).",
			`{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"],"additionalProperties":false}`,
			glob),
	}
}

func readFile(_ context.Context, b backend, raw json.RawMessage) (any, bool, error) {
	var in struct {
		Path   string `json:"path"`
		Offset int    `json:"offset"`
		Limit  int    `json:"limit"`
	}
	if err := decode(ReadFile, raw, &in); err != nil {
		return nil, false, err
	}
	name, err := CleanFile(in.Path)
	if err != nil {
		return nil, false, err
	}
	data, err := b.read(name)
	if err != nil {
		return nil, false, err
	}
	if in.Offset < 0 || in.Limit < 0 {
		return nil, false, &capabilities.InputError{Tool: ReadFile, Msg: "offset and limit must be 0 or more"}
	}
	text := string(data)
	if in.Offset == 0 && in.Limit == 0 {
		return text, false, nil
	}
	lines := strings.SplitAfter(text, "\n")
	if in.Offset >= len(lines) {
		return nil, false, fmt.Errorf("offset %d is past the end of %q, which has %d lines", in.Offset, name, len(lines))
	}
	lines = lines[in.Offset:]
	if in.Limit > 0 && in.Limit < len(lines) {
		lines = lines[:in.Limit]
	}
	return strings.Join(lines, ""), false, nil
}

func writeFile(_ context.Context, b backend, raw json.RawMessage) (any, bool, error) {
	var in struct {
		Path    string  `json:"path"`
		Content *string `json:"content"`
	}
	if err := decode(WriteFile, raw, &in); err != nil {
		return nil, false, err
	}
	if in.Content == nil {
		return nil, false, &capabilities.InputError{Tool: WriteFile, Msg: "content is missing; send the file's whole text"}
	}
	name, err := CleanFile(in.Path)
	if err != nil {
		return nil, false, err
	}
	if err := b.write(name, []byte(*in.Content)); err != nil {
		return nil, false, err
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(*in.Content), name), true, nil
}

func editFile(_ context.Context, b backend, raw json.RawMessage) (any, bool, error) {
	var in struct {
		Path       string `json:"path"`
		OldString  string `json:"oldString"`
		NewString  string `json:"newString"`
		ReplaceAll bool   `json:"replaceAll"`
	}
	if err := decode(EditFile, raw, &in); err != nil {
		return nil, false, err
	}
	name, err := CleanFile(in.Path)
	if err != nil {
		return nil, false, err
	}
	if in.OldString == "" {
		return nil, false, &capabilities.InputError{Tool: EditFile, Msg: "oldString is empty; copy the text to replace from the file (writeFile replaces a whole file)"}
	}
	data, err := b.read(name)
	if err != nil {
		return nil, false, err
	}
	text := string(data)
	n := strings.Count(text, in.OldString)
	switch {
	case n == 0:
		return nil, false, fmt.Errorf("oldString was not found in %s; readFile it and copy the text exactly, spaces and line breaks included", name)
	case n > 1 && !in.ReplaceAll:
		return nil, false, fmt.Errorf("oldString occurs %d times in %s; add the lines around it so that it occurs once, or set replaceAll to replace every one", n, name)
	}
	replaced := 1
	if in.ReplaceAll {
		replaced = n
	}
	// Size the result before building it: a short oldString replaced
	// many times by a long newString would otherwise build a string far
	// past the limit before the write refuses it.
	if size := int64(len(text)) + int64(replaced)*(int64(len(in.NewString))-int64(len(in.OldString))); size > MaxFileSize {
		return nil, false, fmt.Errorf("editing %q would make it %d bytes, over the %d KiB limit of the workspace's file tools; replace fewer occurrences or shorten newString", name, size, MaxFileSize>>10)
	}
	text = strings.Replace(text, in.OldString, in.NewString, replaced)
	if err := b.write(name, []byte(text)); err != nil {
		return nil, false, err
	}
	return fmt.Sprintf("replaced %d occurrence(s) in %s", n, name), true, nil
}

// listEntry is one entry of listDir's output.
type listEntry struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size int64  `json:"size,omitempty"`
}

func listDir(_ context.Context, b backend, raw json.RawMessage) (any, bool, error) {
	var in struct {
		Path string `json:"path"`
	}
	if err := decode(ListDir, raw, &in); err != nil {
		return nil, false, err
	}
	if in.Path == "" {
		in.Path = "."
	}
	name, err := Clean(in.Path)
	if err != nil {
		return nil, false, err
	}
	list, err := b.readDir(name)
	if err != nil {
		return nil, false, err
	}
	out := make([]listEntry, 0, len(list))
	for _, e := range list {
		if len(out) == MaxListed {
			return nil, false, fmt.Errorf("%s holds more than %d entries; use glob to narrow it down", name, MaxListed)
		}
		le := listEntry{Name: e.Path[strings.LastIndex(e.Path, "/")+1:], Type: "file", Size: e.Size}
		if e.Dir {
			le.Type, le.Size = "dir", 0
		}
		out = append(out, le)
	}
	return out, false, nil
}

func glob(ctx context.Context, b backend, raw json.RawMessage) (any, bool, error) {
	var in struct {
		Pattern string `json:"pattern"`
	}
	if err := decode(Glob, raw, &in); err != nil {
		return nil, false, err
	}
	if msg := validPattern(in.Pattern); msg != "" {
		return nil, false, &capabilities.InputError{Tool: Glob, Msg: msg}
	}
	files, err := b.files(ctx)
	if err != nil {
		return nil, false, err
	}
	out := []string{}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, false, fmt.Errorf("glob %q stopped: %w", in.Pattern, err)
		}
		if Match(in.Pattern, f.Path) {
			out = append(out, f.Path)
		}
	}
	if len(files) > MaxListed {
		return nil, false, errors.New("the workspace holds too many files to search them all; name a narrower folder in the pattern")
	}
	return out, false, nil
}
