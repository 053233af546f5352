//! The walk behind [`super::to_json`], in raw napi calls so that every JavaScript throw (a
//! getter, a Proxy trap, `toJSON`) is caught where it happens and named by its path.

use std::ffi::c_char;
use std::ptr;

use napi::bindgen_prelude::*;
use napi::sys;
use serde_json::{Map, Number, Value};

use super::limits::{Limits, Refusal, Step};

mod refusal;

type Read<T> = std::result::Result<T, Refusal>;

/// `sys::f(env, args…)` with a throw or failure turned into a refusal at the current path.
macro_rules! napi {
    ($walk:expr, $f:ident($($arg:expr),* $(,)?)) => {
        // SAFETY: as for every napi call of the walk (see `Walk`): its environment, on its
        // thread, with handles of the current scope and out-pointers to locals.
        $walk.check(unsafe { sys::$f($walk.env, $($arg),*) })
    };
}

/// Every raw napi call of a walk is sound for one reason, said once here: `env` comes from the
/// `&Env` of the JavaScript call being served (the walk is made and dropped within it, on that
/// environment's thread), every `napi_value` it passes is a handle of the current or an
/// enclosing open scope (the value being read, or one read from it), and every out-pointer is
/// a local of the right type.
pub(super) struct Walk<'a> {
    env: sys::napi_env,
    root: &'a str,
    limits: Limits,
    values_left: usize,
    text_left: usize,
    steps: Vec<Step>,
    /// The objects and arrays being read, outermost first: `containers[i]` sits at `steps[..i]`.
    containers: Vec<sys::napi_value>,
    string_ctor: Option<sys::napi_value>,
}

/// Closes a handle scope when a container has been read, so reading a big value holds handles
/// for one path, not for every value.
struct Scope {
    env: sys::napi_env,
    scope: sys::napi_handle_scope,
}

impl Drop for Scope {
    fn drop(&mut self) {
        // SAFETY: the scope was opened by `Walk` in this environment and is closed once, here.
        unsafe { sys::napi_close_handle_scope(self.env, self.scope) };
    }
}

impl<'a> Walk<'a> {
    pub(super) fn new(env: &Env, root: &'a str, limits: Limits) -> Self {
        let string_ctor = env
            .get_global()
            .and_then(|global| global.get_named_property::<Unknown>("String"))
            .ok()
            .map(|ctor| ctor.raw());
        Walk {
            env: env.raw(),
            root,
            limits,
            values_left: limits.values,
            text_left: limits.text_bytes,
            steps: Vec::new(),
            containers: Vec::new(),
            string_ctor,
        }
    }

    pub(super) fn read(mut self, value: Unknown) -> Read<Option<Value>> {
        self.value(value.raw(), "", true)
    }

    fn type_of(&self, value: sys::napi_value) -> sys::napi_valuetype {
        let mut kind = sys::ValueType::napi_undefined;
        // SAFETY: a napi call of the walk, sound as `Walk` says.
        unsafe { sys::napi_typeof(self.env, value, &mut kind) };
        kind
    }

    /// `value` as JSON; `None` for `undefined` (dropped from objects, `null` in arrays).
    fn value(
        &mut self,
        value: sys::napi_value,
        key: &str,
        call_to_json: bool,
    ) -> Read<Option<Value>> {
        if self.values_left == 0 {
            let problem = format!("too many values (at most {} in all)", self.limits.values);
            return Err(self.over_limit(value, problem));
        }
        self.values_left -= 1;
        let json = match self.type_of(value) {
            sys::ValueType::napi_undefined => return Ok(None),
            sys::ValueType::napi_null => Value::Null,
            sys::ValueType::napi_boolean => {
                let mut b = false;
                napi!(self, napi_get_value_bool(value, &mut b))?;
                Value::Bool(b)
            }
            sys::ValueType::napi_number => self.number(value)?,
            sys::ValueType::napi_string => Value::String(self.string(value)?),
            sys::ValueType::napi_object => return self.object(value, key, call_to_json),
            sys::ValueType::napi_function => return Err(self.refuse("a function is not JSON")),
            sys::ValueType::napi_symbol => return Err(self.refuse("a symbol is not JSON")),
            sys::ValueType::napi_bigint => {
                return Err(self.refuse("a BigInt is not JSON (use a number or a string)"));
            }
            _ => return Err(self.refuse("a native handle is not JSON")),
        };
        Ok(Some(json))
    }

    fn number(&self, value: sys::napi_value) -> Read<Value> {
        let mut n = 0.0;
        napi!(self, napi_get_value_double(value, &mut n))?;
        // Whole numbers stay integers (`5000000000`, not `5000000000.0`) up to 2^53, where a
        // double stops being exact.
        const EXACT: f64 = 9_007_199_254_740_992.0;
        if n.fract() == 0.0 && n.abs() <= EXACT {
            return Ok(Value::Number(Number::from(n as i64)));
        }
        Number::from_f64(n).map(Value::Number).ok_or_else(|| {
            let name = match n {
                f64::INFINITY => "Infinity",
                f64::NEG_INFINITY => "-Infinity",
                _ => "NaN",
            };
            self.refuse(format!("{name} is not a JSON number"))
        })
    }

    /// A string, its size checked against the text budget before anything is copied.
    fn string(&mut self, value: sys::napi_value) -> Read<String> {
        let mut len = 0;
        napi!(
            self,
            napi_get_value_string_utf8(value, ptr::null_mut(), 0, &mut len)
        )?;
        if len > self.text_left {
            return Err(self.refuse(format!(
                "too much text ({len} bytes in one string; at most {} MiB in all)",
                self.limits.text_bytes / (1024 * 1024)
            )));
        }
        self.text_left -= len;
        self.copy_string(value, len)
    }

    fn copy_string(&self, value: sys::napi_value, len: usize) -> Read<String> {
        let mut buf = vec![0u8; len + 1];
        let mut written = 0;
        let out = buf.as_mut_ptr().cast::<c_char>();
        napi!(
            self,
            napi_get_value_string_utf8(value, out, len + 1, &mut written)
        )?;
        buf.truncate(written.min(len));
        // V8 writes lone surrogates as U+FFFD, so this is valid UTF-8; stay panic-free anyway.
        Ok(String::from_utf8(buf)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }

    fn object(
        &mut self,
        object: sys::napi_value,
        key: &str,
        call_to_json: bool,
    ) -> Read<Option<Value>> {
        if call_to_json {
            // Like JSON.stringify: a Date, URL or Buffer says how it wants to be written.
            let mut to_json = ptr::null_mut();
            napi!(
                self,
                napi_get_named_property(object, c"toJSON".as_ptr(), &mut to_json)
            )?;
            if self.type_of(to_json) == sys::ValueType::napi_function {
                let (mut key_value, mut replaced) = (ptr::null_mut(), ptr::null_mut());
                let (text, len) = (key.as_ptr().cast(), key.len() as isize);
                napi!(self, napi_create_string_utf8(text, len, &mut key_value))?;
                napi!(
                    self,
                    napi_call_function(object, to_json, 1, &key_value, &mut replaced)
                )?;
                // The replacement stands for this value: it is not one more.
                self.values_left += 1;
                return self.value(replaced, key, false);
            }
        }
        if self.containers.len() >= self.limits.depth {
            let problem = format!("nested too deeply (more than {} levels)", self.limits.depth);
            return Err(self.over_limit(object, problem));
        }
        if let Some(text) = self.boxed_string(object)? {
            return Ok(Some(Value::String(text)));
        }
        let mut scope = ptr::null_mut();
        napi!(self, napi_open_handle_scope(&mut scope))?;
        let _scope = Scope {
            env: self.env,
            scope,
        };
        self.containers.push(object);
        let mut is_array = false;
        let read = napi!(self, napi_is_array(object, &mut is_array)).and_then(|()| {
            if is_array {
                self.array(object)
            } else {
                self.fields(object)
            }
        });
        self.containers.pop();
        read.map(Some)
    }

    /// `new String("…")` is written as its text, like JSON.stringify does (and its characters,
    /// which are its keys, are never listed one by one).
    fn boxed_string(&mut self, object: sys::napi_value) -> Read<Option<String>> {
        let Some(ctor) = self.string_ctor else {
            return Ok(None);
        };
        let mut is_string = false;
        napi!(self, napi_instanceof(object, ctor, &mut is_string))?;
        if !is_string {
            return Ok(None);
        }
        let mut text = ptr::null_mut();
        napi!(self, napi_coerce_to_string(object, &mut text))?;
        self.string(text).map(Some)
    }

    fn array(&mut self, array: sys::napi_value) -> Read<Value> {
        let mut len = 0u32;
        napi!(self, napi_get_array_length(array, &mut len))?;
        // Claimed before reading: a sparse array's length costs nothing to make up.
        self.claim(array, len as usize, "array too long", "elements")?;
        let mut items = Vec::with_capacity((len as usize).min(1024));
        for i in 0..len {
            self.steps.push(Step::Index(i));
            let mut element = ptr::null_mut();
            let item = napi!(self, napi_get_element(array, i, &mut element))
                .and_then(|()| self.value(element, &i.to_string(), true));
            self.steps.pop();
            items.push(item?.unwrap_or(Value::Null));
        }
        Ok(Value::Array(items))
    }

    fn fields(&mut self, object: sys::napi_value) -> Read<Value> {
        let mut is_typed = false;
        napi!(self, napi_is_typedarray(object, &mut is_typed))?;
        if is_typed {
            // Its elements are its keys: count them before V8 is asked to list them.
            let (mut kind, mut length, mut offset) = (0, 0usize, 0);
            let (mut data, mut buffer) = (ptr::null_mut(), ptr::null_mut());
            let info = (&mut kind, &mut length, &mut data, &mut buffer, &mut offset);
            napi!(
                self,
                napi_get_typedarray_info(object, info.0, info.1, info.2, info.3, info.4)
            )?;
            self.claim(object, length, "typed array too long", "elements")?;
        }
        let mut keys = ptr::null_mut();
        let own = sys::KeyCollectionMode::own_only;
        let enumerable = sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols;
        let as_strings = sys::KeyConversion::numbers_to_strings;
        napi!(
            self,
            napi_get_all_property_names(object, own, enumerable, as_strings, &mut keys)
        )?;
        let mut count = 0u32;
        napi!(self, napi_get_array_length(keys, &mut count))?;
        self.claim(object, count as usize, "too many keys", "")?;
        let mut map = Map::new();
        for i in 0..count {
            let mut key = ptr::null_mut();
            napi!(self, napi_get_element(keys, i, &mut key))?;
            let name = self.string(key)?;
            self.steps.push(Step::Key(name.clone()));
            let mut member = ptr::null_mut();
            let read = napi!(self, napi_get_property(object, key, &mut member))
                .and_then(|()| self.value(member, &name, true));
            self.steps.pop();
            if let Some(value) = read? {
                map.insert(name, value);
            }
        }
        Ok(Value::Object(map))
    }
}
