// Package fakeserve holds what the fake model servers (fakeanthropic,
// fakegemini, fakeresponses) share: a listener on 127.0.0.1 and the
// script that answers their requests one at a time, keeping each
// request for the test to read, and the writing of a JSON answer and a
// server-sent event. Each fake speaks its own protocol.
package fakeserve
