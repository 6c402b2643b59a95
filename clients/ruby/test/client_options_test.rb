# frozen_string_literal: true

require "minitest/autorun"
require "rbconfig"
require "socket"
require "quarry"

# require "quarry/client" (the gem's name), retry: beside retry_policy:, what an error says, and
# a proxy's HTML page in front of the gateway, against a tiny local HTTP server.
class ClientOptionsTest < Minitest::Test
  # Answers every request with +status+ and +body+, counting them; yields its URL.
  def serve(status, body, content_type: "application/json")
    server = TCPServer.new("127.0.0.1", 0)
    count = 0
    thread = Thread.new do
      loop do
        socket = server.accept
        length = 0
        while (line = socket.gets) && line != "\r\n"
          length = line.split(":", 2)[1].to_i if line.downcase.start_with?("content-length:")
        end
        socket.read(length) if length.positive?
        count += 1
        socket.write("HTTP/1.1 #{status} X\r\nContent-Type: #{content_type}\r\nX-Request-Id: req_srv\r\n" \
                     "Content-Length: #{body.bytesize}\r\nConnection: close\r\n\r\n#{body}")
        socket.close
      end
    end
    yield "http://127.0.0.1:#{server.addr[1]}", -> { count }
  ensure
    thread&.kill
    server&.close
  end

  UNAVAILABLE = '{"error":{"code":"SOURCE_UNAVAILABLE","message":"down","request_id":"req_503"}}'

  def test_require_quarry_client_loads_the_whole_client
    script = 'require "quarry/client"; c = Quarry::Client.new("http://127.0.0.1:1", api_key: "k"); ' \
             'print [c.class, Quarry::RateLimitError.ancestors.include?(Quarry::Error), Quarry::VERSION.empty?, ' \
             'c.marketplace.class, Quarry::Models::Usage.class, Quarry.respond_to?(:sign_up)].inspect'
    out = IO.popen([RbConfig.ruby, "-I", File.expand_path("../lib", __dir__), "-e", script], err: %i[child out], &:read)
    assert_equal "[Quarry::Client, true, false, Quarry::MarketplaceResource, Class, true]", out
  end

  def test_sign_up_takes_retry_too
    limited = '{"error":{"code":"RATE_LIMIT_EXCEEDED","message":"slow down","retry_after":0,"request_id":"req_429"}}'
    serve(429, limited) do |url, count|
      assert_raises(Quarry::RateLimitError) do
        Quarry.sign_up(url, email: "a@example.com", name: "A", retry: Quarry::RetryPolicy.new(retries: 2, base_delay: 0.001))
      end
      assert_equal 3, count.call # the policy given: a rate-limited sign-up is tried again twice
      assert_raises(ArgumentError) do
        Quarry.sign_up(url, email: "a@example.com", name: "A", retry: Quarry::RetryPolicy.new,
                            retry_policy: Quarry::RetryPolicy.new)
      end
    end
  end

  def test_retry_keyword
    serve(503, UNAVAILABLE) do |url, count|
      client = Quarry::Client.new(url, api_key: "k", retry: Quarry::RetryPolicy.new(retries: 0))
      assert_raises(Quarry::SourceUnavailableError) { client.query("s") }
      assert_equal 1, count.call
    end
  end

  def test_retry_policy_keyword_still_works_with_a_deprecation_warning
    serve(503, UNAVAILABLE) do |url, count|
      client = nil
      _, err = capture_io do
        client = Quarry::Client.new(url, api_key: "k", retry_policy: Quarry::RetryPolicy.new(retries: 1, base_delay: 0.001))
      end
      assert_match(/retry_policy: is deprecated.*retry:/, err)
      assert_raises(Quarry::SourceUnavailableError) { client.query("s") }
      assert_equal 2, count.call
    end
  end

  def test_the_message_names_the_code_and_the_request_id
    serve(503, UNAVAILABLE) do |url, _count|
      client = Quarry::Client.new(url, api_key: "k", retry: Quarry::RetryPolicy.new(retries: 0))
      error = assert_raises(Quarry::SourceUnavailableError) { client.query("s") }
      assert_includes error.message, "SOURCE_UNAVAILABLE"
      assert_includes error.message, "req_503"
      assert_equal "down", error.reason
      assert_equal "SOURCE_UNAVAILABLE: down (request req_503)", error.message
    end
  end

  def test_a_proxy_error_page_is_the_upstream_or_unavailable_family
    page = "<html><body><h1>Bad Gateway</h1></body></html>"
    { 502 => Quarry::UpstreamError, 503 => Quarry::SourceUnavailableError, 504 => Quarry::UpstreamError }.each do |status, klass|
      serve(status, page, content_type: "text/html") do |url, _count|
        client = Quarry::Client.new(url, api_key: "k", retry: Quarry::RetryPolicy.new(retries: 0))
        error = assert_raises(Quarry::Error) { client.query("s") }
        assert_instance_of klass, error, "HTTP #{status}"
        assert_equal status, error.status
      end
    end
    assert_instance_of Quarry::Error, Quarry.error_from_response(500, {}, page)
  end
end
