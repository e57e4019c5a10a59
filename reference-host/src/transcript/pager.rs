//! One window's page: records read backwards from where the page starts, their events placed
//! newest first until `last` events are counted, a byte budget runs out, or the head is reached.
//!
//! - A run of consecutive records that are nothing but bookkeeping of one type (Claude Code's
//!   progress ticks, often three quarters of a long file) is placed as one `bookkeeping` event
//!   with the number of `records` it stands for, addressed by its oldest record; such events do
//!   not count towards `last`, so a window of the last 20 events shows the conversation.
//! - A page always makes progress: its first record is read whatever `read_bytes` says, and its
//!   first event is placed whatever room the frame has left, its strings cut below
//!   `header_bytes` as far as it takes (the caller has refused a frame too small for one event cut
//!   to nothing). Every later event either fits whole or ends the page.
//! - `older` is the cursor of the page's oldest event when older events remain, else null.

use schema::transcript::EventKind;
use schema::{Cursor, EventHeader};

use super::ahead::Ahead;
use super::classify::{self, Part};
use super::cursor::Position;
use super::scan::{Backward, Record};
use super::{Open, Page, PageLimits, Reader, WINDOW_LIMITS, header, parse_record, parts_of};

/// A run of bookkeeping records being folded into one event.
#[derive(Debug)]
struct Fold {
    type_name: String,
    records: u32,
    /// Its oldest record so far: the event's cursor, `ts` and `preview` are that record's.
    oldest: Record,
    ts: Option<String>,
    preview: Option<String>,
}

/// Why placing an event ended the page.
#[derive(Debug)]
enum Stop {
    /// The frame has no room for it: older events remain.
    Room,
    /// Reading the file failed.
    Io(std::io::Error),
}

/// A page being filled.
pub(super) struct Pager<'r, 'o, 'a> {
    reader: &'r Reader,
    open: &'o Open<'a>,
    limits: PageLimits,
    header_cap: usize,
    page: Page,
    /// Bytes of the room taken so far (the session first).
    used: usize,
    /// Events placed that count towards `last`.
    counted: usize,
    fold: Option<Fold>,
}

impl<'r, 'o, 'a> Pager<'r, 'o, 'a> {
    /// An empty page of `open` carrying `session` (already cut to `header_cap`), which takes
    /// `session_size` bytes of the room.
    pub fn new(
        reader: &'r Reader,
        open: &'o Open<'a>,
        limits: PageLimits,
        header_cap: usize,
        session: Option<schema::transcript::SessionMeta>,
        session_size: usize,
    ) -> Pager<'r, 'o, 'a> {
        Pager {
            reader,
            open,
            limits,
            header_cap,
            page: Page {
                session,
                older: None,
                budget_truncated: false,
                unknown: 0,
                events: Vec::new(),
            },
            used: session_size,
            counted: 0,
            fold: None,
        }
    }

    /// The page from `first` (a record and how many of its events to consider), then the
    /// records before `scan_from`.
    pub fn run(
        mut self,
        first: Option<(Record, Option<u32>)>,
        scan_from: u64,
    ) -> std::io::Result<Page> {
        self.fill(first, scan_from)?;
        Ok(self.page)
    }

    fn fill(
        &mut self,
        mut first: Option<(Record, Option<u32>)>,
        scan_from: u64,
    ) -> std::io::Result<()> {
        let open = self.open;
        let last = usize::try_from(self.limits.window.last).unwrap_or(usize::MAX);
        let read_cap = u64::from(self.limits.window.read_bytes);
        let mut scan = Backward::from(&open.file, scan_from);
        let mut ahead: Option<Ahead> = None;
        let mut scanned = 0u64;
        // Older events remain when the page stops.
        let mut more = false;
        'records: loop {
            let (record, part_limit) = match first.take() {
                Some(first) => first,
                None => match scan.next_record()? {
                    Some(record) => (record, None),
                    None => break,
                },
            };
            if self.counted == last || (scanned > 0 && scanned + record.footprint() > read_cap) {
                self.page.budget_truncated = self.counted < last;
                more = true;
                // A run being folded stops here too: its records so far are placed below.
                break;
            }
            scanned += record.footprint();
            let node = parse_record(&open.file, record, WINDOW_LIMITS);
            let ahead = match &mut ahead {
                Some(ahead) => ahead,
                None => ahead.insert(Ahead::read(
                    &open.file,
                    open.format,
                    record.offset + record.footprint(),
                    open.end,
                )?),
            };
            let mark = classify::mark(open.format, node.as_ref());
            let parts = parts_of(open.format, node.as_ref(), ahead.last_part(&mark));
            ahead.step_back(mark, record.footprint());
            let count = parts
                .len()
                .min(part_limit.map_or(usize::MAX, |p| p as usize));
            if let [only] = &parts[..count]
                && let EventKind::Bookkeeping(kind) = &only.kind
            {
                match &mut self.fold {
                    Some(fold) if fold.type_name == kind.type_name => {
                        fold.records += 1;
                        fold.oldest = record;
                        fold.ts = only.ts.map(str::to_owned);
                        fold.preview = only.preview.as_deref().map(str::to_owned);
                    }
                    _ => {
                        if let Err(stop) = self.flush() {
                            return self.stopped(stop);
                        }
                        self.fold = Some(Fold {
                            type_name: kind.type_name.clone(),
                            records: 1,
                            oldest: record,
                            ts: only.ts.map(str::to_owned),
                            preview: only.preview.as_deref().map(str::to_owned),
                        });
                    }
                }
                continue;
            }
            if let Err(stop) = self.flush() {
                return self.stopped(stop);
            }
            for index in (0..count).rev() {
                if self.counted == last {
                    more = true;
                    break 'records;
                }
                let position = Position {
                    record,
                    part: u32::try_from(index).unwrap_or(u32::MAX),
                };
                if let Err(stop) = self.place_part(&parts[index], position) {
                    return self.stopped(stop);
                }
                self.counted += 1;
            }
        }
        if let Err(stop) = self.flush() {
            return self.stopped(stop);
        }
        if more {
            self.page.older = self.page.events.last().map(|oldest| oldest.cursor.clone());
        }
        Ok(())
    }

    /// The page stopped on `stop`: on a frame with no room, older events remain from its oldest.
    fn stopped(&mut self, stop: Stop) -> std::io::Result<()> {
        match stop {
            Stop::Io(err) => Err(err),
            Stop::Room => {
                self.page.budget_truncated = true;
                self.page.older = self.page.events.last().map(|oldest| oldest.cursor.clone());
                Ok(())
            }
        }
    }

    fn mint(&self, position: Position) -> Result<Cursor, Stop> {
        self.reader.mint(self.open, position).map_err(Stop::Io)
    }

    /// Places the fold being built, if any.
    fn flush(&mut self) -> Result<(), Stop> {
        let Some(fold) = self.fold.take() else {
            return Ok(());
        };
        let cursor = self.mint(Position {
            record: fold.oldest,
            part: 0,
        })?;
        self.place(|cap| {
            header::fold(
                &fold.type_name,
                fold.records,
                cursor.clone(),
                fold.ts.as_deref(),
                fold.preview.as_deref(),
                cap,
            )
        })
    }

    fn place_part(&mut self, part: &Part<'_>, position: Position) -> Result<(), Stop> {
        let cursor = self.mint(position)?;
        self.place(|cap| header::header(part, cursor.clone(), cap))
    }

    /// Places the header `make` builds at a cap: whole when it fits, cut to fit when it is the
    /// page's first event; else the page has no room for it.
    fn place(&mut self, make: impl Fn(usize) -> EventHeader) -> Result<(), Stop> {
        let room = self.limits.room.saturating_sub(self.used);
        let cap = if self.page.events.is_empty() {
            // The caller refused a frame that cannot hold one event cut to nothing.
            header::fitted(self.header_cap, room, &make)
        } else {
            let header = make(self.header_cap);
            let size = header::size(&header);
            (size <= room).then_some((header, size))
        };
        let Some((header, size)) = cap else {
            return Err(Stop::Room);
        };
        self.used += size;
        if matches!(header.kind, EventKind::Unknown(_)) {
            self.page.unknown += 1;
        }
        self.page.events.push(header);
        Ok(())
    }
}
