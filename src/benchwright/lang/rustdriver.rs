// ---- benchwright driver: not part of any test case ----
mod bw_driver {
    use std::io::{Read, Write};

    static PANIC: std::sync::Mutex<Option<(String, String, u32, u32)>> =
        std::sync::Mutex::new(None);

    fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
        if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "Box<dyn Any>".to_string()
        }
    }

    fn json_str(s: &str) -> String {
        let mut out = String::with_capacity(s.len() + 2);
        out.push('"');
        for (n, c) in s.chars().enumerate() {
            if n >= 4000 {
                out.push_str("...");
                break;
            }
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    pub fn main(tests: &[fn()]) {
        // the token first: it proves to the runner that this process saw the test return
        let mut token = String::new();
        let _ = std::io::stdin().read_to_string(&mut token);
        let token = token.trim().to_string();
        let index = match std::env::args().nth(1).and_then(|a| a.parse::<usize>().ok()) {
            Some(i) if i < tests.len() => i,
            _ => {
                eprintln!("benchwright: no such test");
                std::process::exit(64);
            }
        };
        // fd 3 is the result channel the runner opened for this process
        let mut channel: std::fs::File =
            unsafe { std::os::unix::io::FromRawFd::from_raw_fd(3) };
        std::panic::set_hook(Box::new(|info| {
            let message = payload_text(info.payload());
            let (file, line, col) = match info.location() {
                Some(l) => (l.file().to_string(), l.line(), l.column()),
                None => (String::new(), 0, 0),
            };
            eprintln!("thread panicked at '{}', {}:{}:{}", message, file, line, col);
            if let Ok(mut first) = PANIC.lock() {
                if first.is_none() {
                    *first = Some((message, file, line, col));
                }
            }
        }));
        let test = tests[index];
        let started = std::time::Instant::now();
        let outcome = std::panic::catch_unwind(test);
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let record = match outcome {
            Ok(()) => format!("{{\"status\":\"pass\",\"time_ms\":{}}}", ms),
            Err(payload) => {
                let seen = PANIC.lock().ok().and_then(|mut p| p.take());
                let (message, file, line, col) = match seen {
                    Some(p) => p,
                    None => (payload_text(&*payload), String::new(), 0, 0),
                };
                format!(
                    "{{\"status\":\"error\",\"kind\":\"panic\",\"time_ms\":{},\"message\":{},\"file\":{},\"line\":{},\"col\":{}}}",
                    ms,
                    json_str(&message),
                    json_str(&file),
                    line,
                    col
                )
            }
        };
        let _ = std::io::stdout().flush();
        let _ = channel.write_all(format!("{} {}\n", token, record).as_bytes());
        std::process::exit(0);
    }
}
