# frozen_string_literal: true

# The Ruby client's methods and models as JSON, for test/clients-surface.test.ts.
# methods: by reflection on a constructed Quarry::Client: a public method taking arguments is a
# top-level method (query), one taking none returns a resource whose public methods are listed
# (client.marketplace.try_token -> marketplace.tryToken); Quarry's module functions (sign_up)
# are top-level methods too. models: every class or Struct of Quarry with a SCHEMA constant, and
# its fields (FIELDS, or a Struct's members): wire names.
require "json"
require "quarry"

def camel(name)
  head, *rest = name.to_s.split("_")
  head + rest.map(&:capitalize).join
end

client = Quarry::Client.new("http://127.0.0.1:9", api_key: "qry_live_surface")
methods = []
Quarry::Client.public_instance_methods(false).each do |name|
  if client.method(name).arity.zero?
    resource = client.public_send(name)
    resource.class.public_instance_methods.each do |m|
      owner = resource.class.instance_method(m).owner
      next unless owner.name&.start_with?("Quarry")

      methods << "#{camel(name)}.#{camel(m)}"
    end
  else
    methods << camel(name)
  end
end
(Quarry.singleton_methods - Module.instance_methods).each { |name| methods << camel(name) }

models = {}
seen = []
walk = lambda do |mod|
  mod.constants.each do |const|
    value = mod.const_get(const)
    next unless value.is_a?(Module) && !seen.include?(value)

    seen << value
    if value.const_defined?(:SCHEMA, false)
      fields = value.const_defined?(:FIELDS, false) ? value::FIELDS : value.members.map(&:to_s)
      Array(value::SCHEMA).each { |schema| models[schema] = fields }
    end
    walk.call(value) if value.name&.start_with?("Quarry")
  end
end
walk.call(Quarry)

puts JSON.generate({ methods: methods.uniq.sort, models: models })
