module github.com/kgrepl/kgrepl

go 1.26

require (
	github.com/chzyer/readline v1.5.1 // indirect
	github.com/creack/pty v1.1.24 // indirect
	golang.org/x/sys v0.0.0-20220310020820-b874c991c1a5 // indirect
)
