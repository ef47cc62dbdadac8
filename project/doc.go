// Package project reads the settings files of a Pulumi project, as Pulumi
// YAML users write them: Pulumi.yaml, which names the project and may name
// its state backend, and Pulumi.<stack>.yaml, which gives one stack's config
// values, some of them encrypted ("secure:") with Pulumi's passphrase
// secrets provider. They are settings, not specs: the program's config
// declarations, variables and resources are the engine's to load.
//
// The package takes bytes and returns values or errors that name the file,
// line and column; reading the files is the caller's job.
package project
