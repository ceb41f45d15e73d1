package main

import (
	"context"
	"errors"

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

// limitsStorage reports whether the settings limit some tenant's stored
// bytes or files, which needs the sizes of each change.
func limitsStorage(s *config.Settings) bool {
	stored := func(l quota.Limits) bool { return l.MaxBytes > 0 || l.MaxFiles > 0 }
	if stored(s.Quota) {
		return true
	}
	for _, l := range s.QuotaTenants {
		if stored(l) {
			return true
		}
	}
	return false
}

// quotaKey is the tenant whose limits a call counts against: the
// verified tenant, or one key for the whole server without --auth.
func quotaKey(req *mcp.CallToolRequest) string { return tenantKey(req.Extra) }

// tenantKey is the quota key of a request with extra: its verified
// tenant, or "-" without authentication.
func tenantKey(extra *mcp.RequestExtra) string {
	if extra != nil {
		if id, err := tenant.FromTokenInfo(extra.TokenInfo); err == nil {
			return string(id.Tenant)
		}
	}
	return "-"
}

// quotaCall is one call's dealings with the quotas, carried in its
// context from limited to the namespace's change hook (reserveChange).
type quotaCall struct {
	q   *quota.Manager
	key string
	// held are the reservations of the call's change requests.
	held []heldChange
	// refused is the limit that cancelled a change, if one did.
	refused error
	// rescan: a change of unknown size (a directory's) was announced.
	rescan bool
}

// heldChange is a reservation and the request it is for: a request a
// later listener cancelled (an approval declined) made no change.
type heldChange struct {
	req *tools.ChangeRequest
	res *quota.Reservation
}

type quotaCallKey struct{}

// reserveChange is the namespace's tools.Options.OnChangeRequest: under a
// call that limited admitted, it reserves the growth the change
// announces (req.Sizes, counting only the namespace's counted mounts)
// before the change commits, and cancels a change a limit refuses. A
// directory's delete announces no sizes and makes the tenant's usage be
// scanned again after it. A directory's move changes nothing: it goes
// within one mount and only to a path that does not exist.
func (n *namespace) reserveChange(ctx context.Context, req *tools.ChangeRequest) error {
	qc, _ := ctx.Value(quotaCallKey{}).(*quotaCall)
	if qc == nil {
		return nil
	}
	if req.Sizes == nil {
		if req.Operation == tools.OpDelete {
			qc.rescan = true
		}
		return nil
	}
	var d quota.Usage
	for _, c := range req.Sizes {
		if n.counts(c.Path) {
			d = d.Add(quota.Resize(c.Before, c.After))
		}
	}
	if d == (quota.Usage{}) {
		return nil
	}
	r, err := qc.q.Reserve(ctx, qc.key, d)
	if err != nil {
		if !errors.Is(err, quota.ErrLimit) {
			// The cause (a storage error) goes to the log, not the model.
			n.opts.Logger.Error("counting a tenant's usage", "tenant", qc.key, "error", err)
			err = errors.New("quota: the stored usage could not be counted; retry the call later")
		}
		qc.refused = err
		req.Cancel(err.Error())
		return nil
	}
	qc.held = append(qc.held, heldChange{req, r})
	return nil
}

// limited wraps a tool's handler with the tenant's call limits (rate and
// concurrency) and, for the tools that change storage, its stored
// limits: reserveChange reserves each change's growth before it commits,
// and the reservation is committed only when the call succeeded, so a
// refused, cancelled or failed call takes nothing.
func limited(q *quota.Manager, t *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler {
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
		if t.Annotations.ReadOnly {
			return next(ctx, req)
		}
		qc := &quotaCall{q: q, key: key}
		res, err := next(context.WithValue(ctx, quotaCallKey{}, qc), req)
		ok := err == nil && res != nil && !res.IsError && qc.refused == nil
		unsure := false
		for _, h := range qc.held {
			_, cancelled := h.req.Cancelled()
			if ok && !cancelled {
				h.res.Commit()
			} else {
				h.res.Cancel()
				// A change that was let through and then failed may have
				// landed in part (an apply_patch whose undo failed, a
				// commit whose answer was lost): count it by a rescan.
				unsure = unsure || !cancelled
			}
		}
		if unsure {
			q.Rescan(key)
		}
		if qc.refused != nil {
			noteQuotaRefusal(ctx, qc.refused)
			return refuse(qc.refused), nil
		}
		if ok && qc.rescan {
			q.Rescan(key)
		}
		return res, err
	}
}

// scanUsage returns the stored usage of a namespace's backend.
func scanUsage(ctx context.Context, b backend.Backend) (quota.Usage, error) {
	return quota.ScanFS(ctx, backend.FS(ctx, b))
}
