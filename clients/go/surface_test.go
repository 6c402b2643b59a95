package quarry

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// handWrittenModels are the structs written by hand, by the OpenAPI schema each stands for
// (generatedModels, in models_schemas_test.go, has the generated ones).
var handWrittenModels = map[string]any{
	"QueryResponse":           Result{},
	"QueryResponse.meta":      Meta{},
	"QueryResponse.columns[]": Column{},
	"ApiKey":                  APIKey{},
	"IssuedApiKey":            APIKey{},
	"Error.error.details[]":   ErrorDetail{},
}

// tsName spells a Go name as the TypeScript client does: TryToken → tryToken, OAuthClients →
// oauthClients, MCP (an initialism) → mcp.
func tsName(name string) string {
	if strings.ToUpper(name) == name {
		return strings.ToLower(name)
	}
	if strings.HasPrefix(name, "OAuth") {
		return "oauth" + name[len("OAuth"):]
	}
	return strings.ToLower(name[:1]) + name[1:]
}

// surface is the client's methods (found by reflection on a Client: its exported methods, and
// the exported methods of each exported field) and its models with their JSON field names.
func surface(t *testing.T) map[string]any {
	client, err := New("http://127.0.0.1:9", WithAPIKey("qry_live_surface"))
	if err != nil {
		t.Fatal(err)
	}
	methods := []string{}
	clientType := reflect.TypeOf(client)
	for i := 0; i < clientType.NumMethod(); i++ {
		methods = append(methods, tsName(clientType.Method(i).Name))
	}
	value := reflect.ValueOf(client).Elem()
	for _, field := range reflect.VisibleFields(value.Type()) {
		if !field.IsExported() || field.Anonymous || field.Type.Kind() != reflect.Pointer {
			continue
		}
		if value.FieldByIndex(field.Index).IsNil() {
			t.Errorf("client.%s is nil", field.Name)
		}
		for i := 0; i < field.Type.NumMethod(); i++ {
			methods = append(methods, tsName(field.Name)+"."+tsName(field.Type.Method(i).Name))
		}
	}
	// A call without a client: the package's function (compiled here, so it exists).
	_ = SignUp
	methods = append(methods, "signUp")
	sort.Strings(methods)

	models := map[string][]string{}
	for _, table := range []map[string]any{handWrittenModels, generatedModels} {
		for schema, model := range table {
			fields := []string{}
			for _, field := range reflect.VisibleFields(reflect.TypeOf(model)) {
				if name, _, _ := strings.Cut(field.Tag.Get("json"), ","); name != "" && name != "-" {
					fields = append(fields, name)
				}
			}
			models[schema] = fields
		}
	}
	return map[string]any{"methods": methods, "models": models}
}

// TestSurface checks the reflection finds the client's resources, and writes the surface as
// JSON to $QUARRY_SURFACE_DUMP for test/clients-surface.test.ts (test/support/client-surface/go.sh).
func TestSurface(t *testing.T) {
	found := surface(t)
	if len(found["methods"].([]string)) < 40 || len(found["models"].(map[string][]string)) < 40 {
		t.Fatalf("the surface is short: %v", found)
	}
	if path := os.Getenv("QUARRY_SURFACE_DUMP"); path != "" {
		out, err := json.Marshal(found)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, out, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
