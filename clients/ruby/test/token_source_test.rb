# frozen_string_literal: true

require "minitest/autorun"
require "json"
require "quarry"

class TokenSourceTest < Minitest::Test
  def setup
    @clock = 0.0
    @forms = []
    post = lambda do |_url, form, _headers, _timeout|
      @forms << form
      [200, {}, JSON.generate(access_token: "tok-#{@forms.size}", token_type: "Bearer", expires_in: 100)]
    end
    credentials = Quarry::OAuthCredentials.new(client_id: "id", client_secret: "secret", scope: %w[query keys])
    @tokens = Quarry::TokenSource.new("http://gw/oauth/token", credentials, post)
    clock = -> { @clock }
    @tokens.define_singleton_method(:now) { clock.call }
  end

  def test_reuses_the_token_and_refreshes_it_before_it_expires
    assert_equal "tok-1", @tokens.token(5)
    @clock = 89.0
    assert_equal "tok-1", @tokens.token(5)
    @clock = 90.5 # a tenth of its 100 s life before expiry
    assert_equal "tok-2", @tokens.token(5)
    assert_equal "grant_type=client_credentials&scope=query+keys", @forms.first
  end

  def test_invalidate_forgets_only_the_refused_token
    assert_equal "tok-1", @tokens.token(5)
    @tokens.invalidate("another")
    assert_equal "tok-1", @tokens.token(5)
    @tokens.invalidate("tok-1")
    assert_equal "tok-2", @tokens.token(5)
  end
end
