# frozen_string_literal: true

require "base64"
require "json"
require "openssl"

module Quarry
  # A webhook delivery that is not Quarry's, or too old: do not act on it.
  class WebhookVerificationError < StandardError; end

  # Verifies a webhook delivery from Quarry (docs/webhooks.md): Standard Webhooks signatures, an
  # HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}" keyed with the endpoint's secret
  # ("whsec_" + base64), sent as space-separated "v1,<base64>" entries (two during a rotation).
  module Webhook
    # Deliveries older or newer than this many seconds are refused (a replayed capture).
    TOLERANCE_SECONDS = 300

    # Returns the event (a Hash: "type", "timestamp", "data") of a genuine, recent delivery;
    # raises WebhookVerificationError otherwise. Pass the raw body exactly as received.
    def self.verify(secret, body, headers, now: Time.now)
      id = header(headers, "webhook-id")
      timestamp = header(headers, "webhook-timestamp")
      signatures = header(headers, "webhook-signature")
      unless timestamp.match?(/\A\d+\z/) && (now.to_i - timestamp.to_i).abs <= TOLERANCE_SECONDS
        raise WebhookVerificationError, "the webhook-timestamp is missing or too far from now"
      end

      key = Base64.strict_decode64(secret.delete_prefix("whsec_"))
      expected = Base64.strict_encode64(OpenSSL::HMAC.digest("SHA256", key, "#{id}.#{timestamp}.#{body}"))
      matched = signatures.split(" ").any? do |entry|
        version, signature = entry.split(",", 2)
        version == "v1" && !signature.nil? && signature.bytesize == expected.bytesize &&
          OpenSSL.fixed_length_secure_compare(signature, expected)
      end
      raise WebhookVerificationError, "no signature matches this secret" unless matched

      JSON.parse(body)
    rescue ArgumentError => e
      raise WebhookVerificationError, "the secret is not whsec_ and base64 (#{e.message})"
    end

    def self.header(headers, name)
      pair = headers.find { |k, _| k.to_s.downcase == name }
      value = pair && (pair[1].is_a?(Array) ? pair[1].first : pair[1])
      raise WebhookVerificationError, "missing #{name} header" if value.nil? || value.to_s.empty?

      value.to_s
    end
    private_class_method :header
  end
end
