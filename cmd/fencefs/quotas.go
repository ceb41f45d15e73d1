package main

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/cmd/fencefs/internal/config"
	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/tenant"
	"github.com/fencefs/fencefs/tools"
)

// newQuotas returns the quota manager the settings ask for, or nil.
// usage scans a tenant's stored files.
func newQuotas(s *config.Settings, usage quota.UsageFunc) (*quota.Manager, error) {
	def := s.Quota
	if def == (quota.Limits{}) && len(s.QuotaTenants) == 0 {
		return nil, nil
	}
	return quota.New(quota.Options{Default: def, Overrides: s.QuotaTenants, Usage: usage})
}

// quotaKey is the tenant whose limits a call counts against: the
// verified tenant, or one key for the whole server without --auth.
func quotaKey(req *mcp.CallToolRequest) string {
	if req.Extra != nil {
		if id, err := tenant.FromTokenInfo(req.Extra.TokenInfo); err == nil {
			return string(id.Tenant)
		}
	}
	return "-"
}

var sizePattern = regexp.MustCompile(`(?m)^size: ([0-9]+) byte`)

// sizeOf returns the size of the regular file p, and whether it exists,
// through probe (file_info).
func sizeOf(ctx context.Context, probe *tools.Tool, p string) (int64, bool, error) {
	raw, _ := json.Marshal(map[string]string{"path": p})
	text, err := probe.Call(ctx, raw)
	if err != nil {
		if strings.HasPrefix(tools.Message(err), "Path not found") {
			return 0, false, nil
		}
		return 0, false, err
	}
	m := sizePattern.FindStringSubmatch(text)
	if m == nil || !strings.Contains(text, "type: file") {
		return 0, true, nil // a directory or a link: no bytes of its own
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n, true, nil
}

// delta returns the change of stored usage a call of tool would make, as
// far as its arguments tell before it runs.
func delta(ctx context.Context, probe *tools.Tool, tool string, raw json.RawMessage) (quota.Usage, error) {
	var a struct {
		Path, Content, Source, OldText, NewText string
		Replacements                            []struct{ OldText, NewText string }
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return quota.Usage{}, nil // the tool refuses it
	}
	str := func(k string) string {
		var s string
		json.Unmarshal(m[k], &s)
		return s
	}
	a.Path, a.Content, a.Source, a.OldText, a.NewText = str("path"), str("content"), str("source"), str("old_text"), str("new_text")
	switch tool {
	case "write_file":
		old, existed, err := sizeOf(ctx, probe, a.Path)
		if err != nil {
			return quota.Usage{}, err
		}
		return quota.Write(old, existed, int64(len(a.Content))), nil
	case "copy_file":
		size, _, err := sizeOf(ctx, probe, a.Source)
		if err != nil {
			return quota.Usage{}, err
		}
		return quota.Usage{Bytes: size, Files: 1}, nil
	case "edit_file":
		json.Unmarshal(m["replacements"], &a.Replacements)
		d := int64(len(a.NewText) - len(a.OldText))
		for _, r := range a.Replacements {
			d += int64(len(r.NewText) - len(r.OldText))
		}
		return quota.Usage{Bytes: d}, nil
	case "delete_file":
		size, existed, err := sizeOf(ctx, probe, a.Path)
		if err != nil || !existed {
			return quota.Usage{}, err
		}
		return quota.Remove(size), nil
	}
	return quota.Usage{}, nil
}

// limited wraps a tool's handler with the tenant's call limits (rate and
// concurrency) and, for the tools that store bytes, its stored limits:
// the growth is reserved before the call and committed only when the
// call succeeded, so a refused or failed call takes nothing.
func limited(q *quota.Manager, t *tools.Tool, probe *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler {
	if q == nil {
		return next
	}
	refuse := func(err error) *mcp.CallToolResult {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
	}
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		key := quotaKey(req)
		release, err := q.Admit(key)
		if err != nil {
			noteQuotaRefusal(ctx, err)
			return refuse(err), nil
		}
		defer release()
		if t.Annotations.ReadOnly || probe == nil {
			return next(ctx, req)
		}
		d, err := delta(ctx, probe, t.Name, req.Params.Arguments)
		if err != nil {
			return refuse(errors.New(tools.Message(err))), nil
		}
		if d == (quota.Usage{}) {
			return next(ctx, req)
		}
		r, err := q.Reserve(ctx, key, d)
		if err != nil {
			noteQuotaRefusal(ctx, err)
			return refuse(err), nil
		}
		res, err := next(ctx, req)
		if err == nil && res != nil && !res.IsError {
			r.Commit()
		} else {
			r.Cancel()
		}
		return res, err
	}
}

// scanUsage returns the stored usage of a namespace's backend.
func scanUsage(ctx context.Context, b backend.Backend) (quota.Usage, error) {
	return quota.ScanFS(ctx, backend.FS(ctx, b))
}
