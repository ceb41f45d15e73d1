package server

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/tenant"
	"github.com/fencefs/fencefs/tools"
)

// Quota is the Link of a tenant's limits: rate and concurrency for every
// call and, for the tools that change storage, its stored bytes and files.
// The namespace's change listener (NamespaceConfig.Metered) reserves each
// change's growth before it commits; the reservation is committed only
// when the call succeeded, so a refused, cancelled or failed call takes
// nothing. A call's tenant is its verified identity's, or "-" without
// authentication.
type Quota struct {
	// Manager holds the limits and the usage; nil limits nothing.
	Manager *quota.Manager
}

// Wrap implements Link.
func (q Quota) Wrap(t *tools.Tool, next mcp.ToolHandler) mcp.ToolHandler {
	if q.Manager == nil {
		return next
	}
	m := q.Manager
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		key := tenantKey(req.Extra)
		release, err := m.Admit(key)
		if err != nil {
			noteQuotaRefusal(ctx, err)
			return refusal(quotaKind(err), err.Error(), err), nil
		}
		defer release()
		if t.Annotations.ReadOnly {
			return next(ctx, req)
		}
		qc := &quotaCall{q: m, key: key}
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
			m.Rescan(key)
		}
		if qc.refused != nil {
			noteQuotaRefusal(ctx, qc.refused)
			return refusal(quotaKind(qc.refused), qc.refused.Error(), qc.refused), nil
		}
		if ok && qc.rescan {
			m.Rescan(key)
		}
		return res, err
	}
}

// quotaKind is the kind of the refusal of a quota that failed with err:
// a rate or concurrency limit is KindRateLimited, a stored bytes or files
// limit KindQuota, and usage that could not be counted KindUnavailable.
func quotaKind(err error) tools.Kind {
	var le *quota.LimitError
	switch {
	case !errors.As(err, &le):
		return tools.KindUnavailable
	case le.Limit == quota.LimitRate, le.Limit == quota.LimitConcurrent:
		return tools.KindRateLimited
	}
	return tools.KindQuota
}

// Middleware returns the MCP middleware that puts the requests besides
// tool calls that read storage (resources, completion, prompts) under the
// caller's rate and concurrency limits, as Wrap does tool calls, so that
// they are no way around them.
func (q Quota) Middleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		if q.Manager == nil {
			return next
		}
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if !readsStorage(method) {
				return next(ctx, method, req)
			}
			release, err := q.Manager.Admit(tenantKey(req.GetExtra()))
			if err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: err.Error()}
			}
			defer release()
			return next(ctx, method, req)
		}
	}
}

// readsStorage reports whether a request other than tools/call reads the
// namespace's storage for its answer.
func readsStorage(method string) bool {
	switch method {
	case "resources/read", "resources/directory/read", "completion/complete", "prompts/get":
		return true
	}
	return false
}

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
// context from Quota.Wrap to the namespace's change hook (reserveChange).
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
	req   *tools.ChangeRequest
	res   *quota.Reservation
	delta quota.Usage
}

type quotaCallKey struct{}

// reserveChange is the namespace's tools.Options.OnChangeRequest: under a
// call that Quota admitted, it reserves the growth the change announces
// (req.Sizes, counting only the namespace's counted mounts) before the
// change commits, and cancels a change a limit refuses. A directory's
// delete announces no sizes and makes the tenant's usage be scanned again
// after it. A directory's move changes nothing: it goes within one mount
// and only to a path that does not exist.
func (n *Namespace) reserveChange(ctx context.Context, req *tools.ChangeRequest) error {
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
			n.logger.ErrorContext(ctx, "counting a tenant's usage", "tenant", qc.key, "error", err)
			err = errors.New("quota: the stored usage could not be counted; retry the call later")
		}
		qc.refused = err
		req.Cancel(err.Error())
		return nil
	}
	qc.held = append(qc.held, heldChange{req, r, d})
	return nil
}

// NewQuotas returns the quota manager of limits def for every tenant and
// overrides for named ones, or nil when they limit nothing. usage scans a
// tenant's stored files (see Tenants.Usage and Namespace.Usage).
func NewQuotas(def quota.Limits, overrides map[string]quota.Limits, usage quota.UsageFunc) (*quota.Manager, error) {
	if def == (quota.Limits{}) && len(overrides) == 0 {
		return nil, nil
	}
	return quota.New(quota.Options{Default: def, Overrides: overrides, Usage: usage})
}

// LimitsStorage reports whether def or overrides limit some tenant's
// stored bytes or files, which needs the sizes of each change
// (NamespaceConfig.Metered).
func LimitsStorage(def quota.Limits, overrides map[string]quota.Limits) bool {
	stored := func(l quota.Limits) bool { return l.MaxBytes > 0 || l.MaxFiles > 0 }
	if stored(def) {
		return true
	}
	for _, l := range overrides {
		if stored(l) {
			return true
		}
	}
	return false
}
