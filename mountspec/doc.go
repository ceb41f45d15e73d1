// Package mountspec turns mount specs ("local:DIR", "s3://BUCKET/PREFIX",
// "sftp://USER@HOST/DIR") into backends.
//
// Parse reads a spec into a comparable Spec, which holds no secret and
// prints back with String. An Opener opens specs to backends and shares
// what can be shared among the namespaces of one server: one S3 client
// (and its connection pool) per mount name and endpoint, one backend per
// identical local or SFTP spec, one SSH connection pool per SFTP server
// and account. Every network mount is probed within its timeout when it is
// opened, and each of its requests later gets that timeout too.
//
// Kinds of storage this package does not know (gs://, azblob://, overlay:)
// are added by a Schemes map given to Schemes.Parse and Options.Schemes,
// without changes here or in the server.
package mountspec
