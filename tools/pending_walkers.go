package tools

import (
	"context"
	"encoding/json"
	"errors"
)

// Placeholders for tools until their files land.

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
