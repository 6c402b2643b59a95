# frozen_string_literal: true

require "minitest/autorun"
require "quarry"

# calls.list_all: every page of the account's recent calls, fetched lazily (no network).
class CallsListAllTest < Minitest::Test
  # Plays GET /v1/account/calls: +total+ calls newest first (r0 the newest), paged by a cursor.
  class FakeCalls
    attr_reader :requests

    def initialize(total)
      @total = total
      @requests = []
    end

    def send_request(method, path, query: nil, **)
      query = (query || {}).compact
      @requests << "#{method} #{path}?#{URI.encode_www_form(query)}"
      limit = query[:limit] || 50
      start = query[:cursor] ? query[:cursor].delete_prefix("after-r").to_i + 1 : 0
      finish = [start + limit, @total].min
      items = (start...finish).map { |i| { "request_id" => "r#{i}", "analytic" => "sales", "status" => "ok", "credits" => 1, "at" => "t" } }
      { "items" => items, "next_cursor" => finish < @total ? "after-r#{finish - 1}" : nil }
    end
  end

  def test_follows_next_cursor_through_every_page_and_stops_when_it_is_nil
    gateway = FakeCalls.new(5)
    calls = Quarry::CallsResource.new(gateway).list_all(analytic: "sales", status: "ok", page_size: 2).to_a
    assert_equal %w[r0 r1 r2 r3 r4], calls.map(&:request_id)
    assert(calls.all? { |c| c.is_a?(Quarry::Models::Call) })
    assert_equal [
      "GET /v1/account/calls?analytic=sales&status=ok&limit=2",
      "GET /v1/account/calls?analytic=sales&status=ok&limit=2&cursor=after-r1",
      "GET /v1/account/calls?analytic=sales&status=ok&limit=2&cursor=after-r3"
    ], gateway.requests
  end

  def test_fetches_lazily_only_the_pages_the_loop_used
    gateway = FakeCalls.new(250)
    every = Quarry::CallsResource.new(gateway).list_all
    assert_empty gateway.requests
    assert_equal 150, every.first(150).length
    # The default page is the largest the gateway gives: 100.
    assert_equal ["GET /v1/account/calls?limit=100", "GET /v1/account/calls?limit=100&cursor=after-r99"], gateway.requests
  end

  def test_yields_nothing_when_there_are_no_calls_after_one_request
    gateway = FakeCalls.new(0)
    assert_empty Quarry::CallsResource.new(gateway).list_all(analytic: "none").to_a
    assert_equal 1, gateway.requests.length
  end
end
