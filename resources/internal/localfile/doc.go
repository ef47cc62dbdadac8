// Package localfile checks local files that a vendor library is about to
// read whole (credentials, configuration), so that a path naming a FIFO, a
// device such as /dev/zero, or a huge file fails at once with a clear error
// instead of hanging or filling memory. The libraries read the files
// themselves; Check is the stat they do not make first.
package localfile
