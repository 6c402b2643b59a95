package quarry

// Column is a result column and its type as the gateway reports it (string, integer, decimal, date …).
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Meta is what the gateway says about one served call.
type Meta struct {
	RequestID string `json:"request_id"`
	// Cached: served from the gateway's result cache.
	Cached     bool    `json:"cached"`
	DurationMS float64 `json:"duration_ms"`
	RowCount   int     `json:"row_count"`
	// Truncated: rows past the analytic's max_rows were cut.
	Truncated bool `json:"truncated"`
	// Credits the call spent.
	Credits int `json:"credits"`
	// Version of the analytic that answered.
	Version int `json:"version,omitempty"`
	// NextPrice: while the owner has a price rise scheduled, what a call will cost from NextPriceAt.
	NextPrice *int64 `json:"next_price,omitempty"`
	// NextPriceAt is when NextPrice takes effect (ISO 8601).
	NextPriceAt string `json:"next_price_at,omitempty"`
	// Preview: a marketplace preview (a try-token call), free, at most the gateway's preview rows.
	Preview bool `json:"preview,omitempty"`
	// TotalRows (pages only): rows in the whole result; RowCount is this page's.
	TotalRows *int `json:"total_rows,omitempty"`
	// Offset (pages only): the index of this page's first row.
	Offset *int `json:"offset,omitempty"`
	// Next (pages only): the cursor of the next page, nil on the last one.
	Next *string `json:"next,omitempty"`
}

// Row is one result row as decoded from JSON: numbers are json.Number (the digits as sent:
// Float64 or Int64 to convert, String to keep them exact), and a 64-bit integer or a wide
// decimal that the gateway sends as a string stays that exact string. To decode rows into your
// own struct, use QueryInto or GetInto.
type Row = map[string]any

// Result is a query's answer with rows as maps.
type Result = TypedResult[Row]

// TypedResult is a query's answer with each row decoded into T (QueryInto, GetInto).
type TypedResult[T any] struct {
	Source  string `json:"source"`
	Results []T    `json:"results"`
	// Insights is the owner-defined shape (single row, keyed, series, totals); nil when none.
	// Its numbers are json.Number.
	Insights any      `json:"insights,omitempty"`
	Columns  []Column `json:"columns"`
	Meta     Meta     `json:"meta"`
}

// APIKey is an API key. Secret is set only on the answer to Keys.Create, shown that once.
type APIKey struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Prefix     string   `json:"prefix"`
	Scopes     []string `json:"scopes"`
	CreatedAt  string   `json:"created_at"`
	ExpiresAt  *string  `json:"expires_at"`
	RevokedAt  *string  `json:"revoked_at"`
	LastUsedAt *string  `json:"last_used_at"`
	Secret     string   `json:"secret,omitempty"`
}

// NewKey describes a key to create.
type NewKey struct {
	Name string `json:"name"`
	// Scopes (query, keys, owner, account); empty for all of yours.
	Scopes []string `json:"scopes,omitempty"`
	// ExpiresAt is an ISO-8601 date-time with offset; empty for never.
	ExpiresAt string `json:"expires_at,omitempty"`
}
