// Package skills owns the skills capability, in the agentskills.io format:
// skills/<name>/SKILL.md beside a route's agent.md or in the app folder,
// whose names and descriptions go into the route's system prompt, with the
// readSkill and readSkillFile tools that read a skill's body and files,
// jailed to its folder.
//
// It imports capabilities, router and thread; it must not import server,
// store, agent or model code.
package skills
