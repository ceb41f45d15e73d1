package tools

import (
	"encoding/json"
	"sync"
)

// Every tenant of a server has a Set of its own, but the Sets of one
// option set describe their tools with the same texts: a description and
// an input schema depend only on the options and on whether the
// namespace is rooted. The process keeps one copy of each, so that a Set
// costs the few hundred bytes of its own state and not its own copy of
// some 20 KB of texts, and a second Set does not indent its schemas
// again. The texts are immutable (Tool.InputSchema is not to be
// modified), so sharing them is safe.
var shared = textCache{
	strs:    make(map[string]string),
	schemas: make(map[string]json.RawMessage),
}

// maxSharedTexts bounds the cache: options are few in a process, but a
// program that made Sets with ever new limits must not grow it forever.
// Beyond the bound texts are simply not shared.
const maxSharedTexts = 4096

// textCache holds the shared descriptions and indented schemas.
type textCache struct {
	mu      sync.RWMutex
	strs    map[string]string
	schemas map[string]json.RawMessage // by compact schema
}

// intern returns the process's copy of the text s.
func (c *textCache) intern(s string) string {
	c.mu.RLock()
	got, ok := c.strs[s]
	c.mu.RUnlock()
	if ok {
		return got
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if got, ok := c.strs[s]; ok {
		return got
	}
	if len(c.strs) < maxSharedTexts {
		c.strs[s] = s
	}
	return s
}

// schema returns the indented form of the compact schema, indenting it
// with indent only the first time.
func (c *textCache) schema(compact []byte, indent func([]byte) json.RawMessage) json.RawMessage {
	c.mu.RLock()
	got, ok := c.schemas[string(compact)]
	c.mu.RUnlock()
	if ok {
		return got
	}
	out := indent(compact)
	c.mu.Lock()
	defer c.mu.Unlock()
	if got, ok := c.schemas[string(compact)]; ok {
		return got
	}
	if len(c.schemas) < maxSharedTexts {
		c.schemas[string(compact)] = out
	}
	return out
}
