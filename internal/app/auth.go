package app

import (
	"github.com/dawn-go/dawn/internal/auth"
	"github.com/dawn-go/dawn/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// authSection is the dawn.yaml section of the server's authentication.
const authSection = "auth"

// jwtKeys are the keys of auth.jwt, in the order errors list them.
const jwtKeys = "secret_env, public_key_file, jwks_url, issuer, audience, user_claim"

// auth reads the auth: section: "none", or {jwt: {secret_env | public_key_file
// | jwks_url, issuer, audience, user_claim}}.
func (p *configParser) auth(section *yaml.Node) auth.Config {
	var c auth.Config
	switch {
	case yamldoc.IsNull(section):
		return c
	case section.Kind == yaml.ScalarNode && section.Value == "none":
		c.None = true
		return c
	case section.Kind != yaml.MappingNode:
		p.fail(section.Line, "%s must be none or a mapping, like %s: {jwt: {secret_env: DAWN_JWT_SECRET}}", authSection, authSection)
		return c
	}
	for key, val := range yamldoc.Pairs(section) {
		if key.Value != "jwt" {
			p.fail(key.Line, "field %s.%s not found; allowed keys in %s: jwt (or auth: none)", authSection, key.Value, authSection)
			continue
		}
		c.JWT = p.jwt(val)
	}
	return c
}

// jwt reads auth.jwt.
func (p *configParser) jwt(section *yaml.Node) *auth.JWT {
	if section.Kind != yaml.MappingNode {
		p.fail(section.Line, "%s.jwt must be a mapping, like {secret_env: DAWN_JWT_SECRET, audience: dawn}", authSection)
		return nil
	}
	j := &auth.JWT{}
	fields := map[string]*string{
		"secret_env": &j.SecretEnv, "public_key_file": &j.PublicKeyFile, "jwks_url": &j.JWKSURL,
		"issuer": &j.Issuer, "audience": &j.Audience, "user_claim": &j.UserClaim,
	}
	for key, val := range yamldoc.Pairs(section) {
		dst, ok := fields[key.Value]
		if !ok {
			p.fail(key.Line, "field %s.jwt.%s not found; allowed keys in %s.jwt: %s", authSection, key.Value, authSection, jwtKeys)
			continue
		}
		*dst = p.text(key, val)
	}
	n := 0
	for _, s := range []string{j.SecretEnv, j.PublicKeyFile, j.JWKSURL} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		p.fail(section.Line, "%s.jwt needs exactly one of secret_env (HS256), public_key_file (RS256 or ES256) or jwks_url", authSection)
	}
	return j
}
