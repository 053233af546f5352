//! The transport's side of handing stdout away (see [`crate::connect::stdio::handoff`]): it
//! gives the descriptor when asked, between two reads, and then reads the lines passed on.

use tokio::io::AsyncRead;

#[cfg(unix)]
use super::IntoFd;
use super::LineTransport;
use crate::connect::stdio::screen::Read;

impl<R> LineTransport<R>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    /// Lets stdout be handed away through [`LineTransport::handoff`], turned into a descriptor
    /// by `into_fd`.
    #[cfg(unix)]
    pub(crate) fn handing_off(mut self, into_fd: IntoFd<R>) -> Self {
        self.into_fd = Some(into_fd);
        self.handoff.allow();
        self
    }

    /// Gives stdout to whoever asked: its descriptor, with what was read and not yet looked at.
    #[cfg(unix)]
    fn give_away(
        &mut self,
        asked: tokio::sync::oneshot::Sender<crate::connect::stdio::handoff::Taken>,
    ) {
        use crate::connect::stdio::handoff::{Feed, Taken, read_on_runtime};
        let (Some(reader), Some(into_fd)) = (self.reader.take(), self.into_fd.take()) else {
            return;
        };
        let buffered = reader.buffer().to_vec();
        let (sender, lines) = tokio::sync::mpsc::unbounded_channel();
        self.lines = Some(lines);
        // A descriptor that cannot be had leaves nothing to read: the end, as on a read error.
        let Ok(fd) = into_fd(reader.into_inner()) else {
            return;
        };
        let line = std::mem::take(&mut self.line);
        let (direct, report, queued) = (
            self.direct.clone(),
            self.report.clone(),
            self.queued.clone(),
        );
        let feed = Feed::new(line, direct, report, sender, queued);
        let taken = Taken { fd, buffered, feed };
        if let Err(taken) = asked.send(taken) {
            read_on_runtime(taken);
        }
    }

    /// The next line from stdout, or (once it is handed away) from its new reader.
    pub(super) async fn next_line(&mut self) -> Read {
        #[cfg(unix)]
        if self.lines.is_none() && self.into_fd.is_some() {
            let handoff = self.handoff.clone();
            tokio::select! {
                biased;
                asked = handoff.asked() => self.give_away(asked),
                read = self.read_line() => return read,
            }
        }
        match self.lines.as_mut() {
            Some(lines) => match lines.recv().await {
                Some(text) => {
                    #[cfg(unix)]
                    self.queued.taken(text.len());
                    self.line = text.into_bytes();
                    Read::Line
                }
                None => Read::End,
            },
            None => self.read_line().await,
        }
    }
}
