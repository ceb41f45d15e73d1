package tools

import (
	"encoding/json"
	"sync"

	"github.com/fencefs/fencefs/policy"
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
	tools:   make(map[textKey]Tool),
	rules:   make(map[rulesKey]*policy.Rules),
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
	// tools are built tools without their Set, by the options their
	// texts read: a cold tenant's Set takes them instead of formatting
	// its descriptions and schemas again.
	tools map[textKey]Tool
	// rules are the policies of Sets, by their patterns and namespace
	// shape (rulesKey): a policy is immutable once built.
	rules map[rulesKey]*policy.Rules
}

// textKey is what a tool's texts depend on (see Set.textKey).
type textKey struct {
	name                                              string
	rooted                                            bool
	maxReadLines, maxReadChars                        int
	maxListResults, maxSearchResults, maxFindResults  int
	readOnly, noContentHashes, requireRead, noUnicode bool
	editTolerance                                     string
}

// tool returns the texts of the tool k names, if built before.
func (c *textCache) tool(k textKey) (Tool, bool) {
	c.mu.RLock()
	t, ok := c.tools[k]
	c.mu.RUnlock()
	return t, ok
}

// putTool keeps the texts of the tool t (its Set dropped) under k.
func (c *textCache) putTool(k textKey, t Tool) {
	t.set, t.timeout = nil, 0
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.tools[k]; !ok && len(c.tools) < maxSharedTexts {
		c.tools[k] = t
	}
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
