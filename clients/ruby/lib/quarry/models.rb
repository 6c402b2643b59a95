# frozen_string_literal: true

module Quarry
  # A result column and its type as the gateway reports it (string, integer, decimal, date …).
  Column = Struct.new(:name, :type, keyword_init: true)

  # What the gateway says about one served call: request_id, cached, duration_ms, row_count,
  # truncated (rows past max_rows were cut), credits spent, and the analytic version.
  # While the owner has a price rise scheduled, next_price is what a call will cost from
  # next_price_at; preview is true on a marketplace preview (a try-token call). Pages only:
  # total_rows (the whole result's; row_count is the page's), offset (the page's first row) and
  # next (the next page's cursor, nil on the last one).
  Meta = Struct.new(:request_id, :cached, :duration_ms, :row_count, :truncated, :credits, :version,
                    :next_price, :next_price_at, :preview, :total_rows, :offset, :next, keyword_init: true)

  # A query's answer: results (rows as Hashes with String keys), insights (the owner-defined
  # shape, nil when none), columns and meta. Values keep their JSON types: a 64-bit integer or a
  # wide decimal that the gateway sends as a string stays that exact String.
  QueryResult = Struct.new(:source, :results, :insights, :columns, :meta, keyword_init: true) do
    # Builds a result from the gateway's JSON answer.
    def self.from_json(body)
      meta = body["meta"] || {}
      new(
        source: body["source"], results: body["results"] || [], insights: body["insights"],
        columns: (body["columns"] || []).map { |c| Column.new(name: c["name"], type: c["type"]) },
        meta: Meta.new(**meta.slice(*Meta.members.map(&:to_s)).transform_keys(&:to_sym))
      )
    end
  end

  # An API key. secret is set only on the answer to Keys#create, shown that once.
  ApiKey = Struct.new(:id, :name, :prefix, :scopes, :created_at, :expires_at, :revoked_at, :last_used_at, :secret,
                      keyword_init: true) do
    # Builds a key from the gateway's JSON.
    def self.from_json(body)
      new(**body.slice(*members.map(&:to_s)).transform_keys(&:to_sym))
    end
  end

  # The OpenAPI schema each of these stands for (test/clients-surface.test.ts reads them).
  Column.const_set(:SCHEMA, "QueryResponse.columns[]")
  Meta.const_set(:SCHEMA, "QueryResponse.meta")
  QueryResult.const_set(:SCHEMA, "QueryResponse")
  ApiKey.const_set(:SCHEMA, %w[ApiKey IssuedApiKey].freeze)
end
