//! The shared writer over a real pipe (partial writes, backlog, order) and an in-memory one.

use super::*;
use std::os::fd::AsRawFd;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

/// A line of `len` bytes naming its writer and number, so the reader can check it.
fn line(writer: usize, number: usize, len: usize) -> Vec<u8> {
    let head = format!("{writer}:{number}:");
    let mut bytes = head.into_bytes();
    bytes.resize(len - 1, b'a' + (number % 26) as u8);
    bytes.push(b'\n');
    bytes
}

fn pipe_writer() -> (StdinWriter, tokio::net::unix::pipe::Receiver) {
    let (sender, receiver) = tokio::net::unix::pipe::pipe().unwrap();
    let fd = sender.as_raw_fd();
    (StdinWriter::new(sender, Some(fd)), receiver)
}

/// Reads lines until end of file, checking each is whole and each writer's are in order.
async fn read_all(receiver: impl tokio::io::AsyncRead + Unpin, writers: usize) -> usize {
    let mut reader = BufReader::new(receiver);
    let mut next = vec![0usize; writers];
    let mut count = 0;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).await.unwrap() == 0 {
            return count;
        }
        let text = std::str::from_utf8(&buf).unwrap();
        let mut fields = text.splitn(3, ':');
        let writer: usize = fields.next().unwrap().parse().unwrap();
        let number: usize = fields.next().unwrap().parse().unwrap();
        let fill = fields.next().unwrap().trim_end_matches('\n');
        assert_eq!(number, next[writer], "writer {writer}'s lines are in order");
        let expected = line(writer, number, buf.len());
        assert_eq!(buf, expected, "line {writer}:{number} is whole");
        assert!(fill.bytes().all(|b| b == b'a' + (number % 26) as u8));
        next[writer] += 1;
        count += 1;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lines_bigger_than_the_pipe_stay_whole_and_in_order() {
    let (writer, receiver) = pipe_writer();
    // Nothing reads yet: the first line fills the pipe (64 KiB) and the rest goes to the backlog.
    writer.write_line(&line(0, 0, 200_000)).unwrap();
    // The flusher may already have taken the backlog over (then it is `flushing`).
    let queued = {
        let state = writer.shared.lock();
        !state.backlog.is_empty() || state.flushing
    };
    assert!(queued, "a partial write left a backlog");
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let writer = writer.clone();
            std::thread::spawn(move || {
                let start = usize::from(w == 0);
                for n in start..200 {
                    // Mixed sizes: some fit the pipe, some never do.
                    let len = if n % 7 == 0 { 100_000 } else { 40 + n };
                    writer.write_line(&line(w, n, len)).unwrap();
                }
            })
        })
        .collect();
    let reading = tokio::spawn(read_all(receiver, 4));
    for thread in writers {
        thread.join().unwrap();
    }
    writer.close();
    assert_eq!(reading.await.unwrap(), 800);
    assert!(writer.write_line(b"late\n").is_err());
}

#[tokio::test]
async fn small_lines_go_out_in_place_without_the_flusher() {
    let (writer, mut receiver) = pipe_writer();
    writer.write_line(b"{\"a\":1}\n").unwrap();
    writer.write_line(b"{\"b\":2}\n").unwrap();
    let in_place = {
        let state = writer.shared.lock();
        state.backlog.is_empty() && !state.flushing
    };
    assert!(in_place);
    let mut buf = [0u8; 16];
    receiver.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"{\"a\":1}\n{\"b\":2}\n");
}

#[tokio::test]
async fn close_ends_stdin_after_the_backlog() {
    let (writer, receiver) = pipe_writer();
    writer.write_line(&line(0, 0, 300_000)).unwrap();
    writer.write_line(&line(0, 1, 10)).unwrap();
    writer.close();
    assert!(writer.write_line(&line(0, 2, 10)).is_err());
    assert_eq!(read_all(receiver, 1).await, 2);
}

#[tokio::test]
async fn a_writer_without_a_pipe_goes_through_the_flusher() {
    let (ours, theirs) = tokio::io::duplex(1024);
    let writer = StdinWriter::new(ours, None);
    for n in 0..100 {
        writer.write_line(&line(0, n, 100 + n * 10)).unwrap();
    }
    writer.close();
    assert_eq!(read_all(theirs, 1).await, 100);
}

#[tokio::test]
async fn a_closed_reader_breaks_the_writer() {
    let (writer, receiver) = pipe_writer();
    drop(receiver);
    let first = writer.write_line(b"x\n");
    assert_eq!(
        first.unwrap_err().kind(),
        std::io::ErrorKind::BrokenPipe,
        "the in-place write meets the closed pipe"
    );
    assert!(writer.write_line(b"y\n").is_err());
}
