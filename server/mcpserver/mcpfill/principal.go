package mcpfill

import "context"

type principalKey struct{}

// WithPrincipal records who is calling: the client whose token the
// request carries.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// PrincipalFrom returns the caller recorded by WithPrincipal, or "".
func PrincipalFrom(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}
