package tools

import (
	"context"
	"encoding/json"
	"errors"
)

// Placeholders for the walker tools until their files land; each file
// (search.go, find.go, listfiles.go, grep.go) replaces its function here.

func (s *Set) searchFilesTool() *Tool { return pendingTool(nameSearchFiles) }
func (s *Set) findFilesTool() *Tool   { return pendingTool(nameFindFiles) }
func (s *Set) listFilesTool() *Tool   { return pendingTool(nameListFiles) }
func (s *Set) grepTool() *Tool        { return pendingTool(nameGrep) }

func pendingTool(name string) *Tool {
	return &Tool{
		Name:        name,
		InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{},"additionalProperties":false}`),
		Annotations: Annotations{Title: name, ReadOnly: true},
		call: func(context.Context, json.RawMessage) (string, error) {
			return "", errors.New("tools: " + name + " is not available yet")
		},
	}
}
